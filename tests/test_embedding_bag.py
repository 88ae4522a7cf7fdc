"""nn.EmbeddingBag on tpu against the CPU: every mode, padding_idx,
per_sample_weights, include_last_offset, 2-D input and empty bags, forward
and gradients (weight and per_sample_weights); bad indices and offsets raise
the CPU's RuntimeError; a training loop of nn.EmbeddingBag matches."""

import itertools

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401

DEV = "tpu"


def _run(dev, mode, padding_idx, psw, last, dtype, two_d, sgf=False):
    g = torch.Generator().manual_seed(1)
    weight = torch.randn(7, 4, generator=g).to(dtype).to(dev).requires_grad_()
    if two_d:
        idx, offsets = torch.tensor([[1, 2, 3], [6, 6, 0]], device=dev), None
    else:
        # bags [1 2] [] [4 4 0] [6 3 3] (and a closing offset for include_last_offset)
        idx = torch.tensor([1, 2, 4, 4, 0, 6, 3, 3], device=dev)
        offsets = torch.tensor([0, 2, 2, 5, 8] if last else [0, 2, 2, 5], device=dev)
    p = None
    if psw:
        p = torch.randn(idx.numel(), generator=g).to(dtype).reshape(idx.shape).to(dev)
        p.requires_grad_()
    out = F.embedding_bag(idx, weight, offsets, mode=mode, padding_idx=padding_idx,
                          per_sample_weights=p, include_last_offset=last,
                          scale_grad_by_freq=sgf)
    out.backward(torch.arange(out.numel(), dtype=torch.float32).reshape(out.shape).to(dtype).to(dev))
    return [t.detach().cpu() for t in [out, weight.grad] + ([p.grad] if psw else [])]


CASES = [c for c in itertools.product(["sum", "mean", "max"], [None, 4], [False, True],
                                      [False, True], [False, True])
         if not (c[2] and c[0] != "sum")]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("mode,padding_idx,psw,last,two_d", CASES)
def test_embedding_bag_matches_cpu(mode, padding_idx, psw, last, two_d, dtype):
    tol = dict(rtol=1.6e-2, atol=1e-2) if dtype == torch.bfloat16 else {}
    cpu = _run("cpu", mode, padding_idx, psw, last, dtype, two_d)
    tpu = _run(DEV, mode, padding_idx, psw, last, dtype, two_d)
    for t, c in zip(tpu, cpu):
        assert t.dtype == c.dtype and t.shape == c.shape
        torch.testing.assert_close(t, c, **tol)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_divides_by_each_index_count(mode):
    # (CPU's kernel miscounts its largest index here: [6, 3, 3] gives row 6
    # half its gradient; CUDA and embedding's own scale_grad_by_freq divide
    # by how often each index occurs, which is what is checked)
    plain = _run(DEV, mode, None, False, False, torch.float32, False)[1]
    scaled = _run(DEV, mode, None, False, False, torch.float32, False, sgf=True)[1]
    idx = torch.tensor([1, 2, 4, 4, 0, 6, 3, 3])
    freq = torch.bincount(idx, minlength=7).clamp_min(1).float().unsqueeze(1)
    torch.testing.assert_close(scaled, plain / freq)


def _raise_on_read(dev, fn):
    try:
        r = fn(dev)
        r.cpu()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


@pytest.mark.parametrize("case", ["index_too_large", "negative_index", "first_offset",
                                  "offset_past_end", "float_indices"])
def test_bad_input_raises_like_cpu(case):
    w = torch.randn(5, 3)
    idx, offsets = {
        "index_too_large": ([0, 9], [0]), "negative_index": ([0, -1], [0]),
        "first_offset": ([0, 1], [1]), "offset_past_end": ([0, 1], [0, 3]),
        "float_indices": ([0.0, 1.0], [0]),
    }[case]

    def fn(dev):
        return F.embedding_bag(torch.tensor(idx, device=dev), w.to(dev),
                               torch.tensor(offsets, device=dev))

    cpu = _raise_on_read("cpu", fn)
    assert cpu is not None
    assert _raise_on_read(DEV, fn) is cpu
    # the error is raised once and the device stays usable
    assert torch.ones(2, device=DEV).sum().item() == 2.0


def test_embedding_bag_module_training_matches_cpu():
    results = {}
    for dev in ("cpu", DEV):
        torch.manual_seed(0)
        bag = torch.nn.EmbeddingBag(20, 8, mode="mean").to(dev)
        head = torch.nn.Linear(8, 2).to(dev)
        opt = torch.optim.SGD(list(bag.parameters()) + list(head.parameters()), lr=0.5)
        g = torch.Generator().manual_seed(3)
        for _ in range(4):
            idx = torch.randint(0, 20, (12,), generator=g).to(dev)
            offsets = torch.tensor([0, 3, 7, 7], device=dev)
            loss = head(bag(idx, offsets)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        results[dev] = [p.detach().cpu() for p in bag.parameters()] + [loss.detach().cpu()]
    for t, c in zip(results[DEV], results["cpu"]):
        torch.testing.assert_close(t, c, rtol=1e-5, atol=1e-5)
