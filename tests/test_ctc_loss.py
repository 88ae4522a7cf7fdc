"""CTC loss on tpu against the CPU: nn.CTCLoss / F.ctc_loss forward and
gradient over padded and concatenated targets, every reduction,
zero_infinity, empty inputs and targets, impossible alignments, float64, a
nonzero blank, int32 targets, unbatched input, strided log_probs, the
aten::_ctc_loss overloads directly (log_alpha included), a small CTC
training loop, the programs reused across lengths, and CPU's errors for bad
input."""

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401
from cpu_reference import DEV, outcome, same
from torch_tpu import debug


def case(T, N, C, tl, concat, blank=0, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    lp = torch.randn(T, N, C, generator=g, dtype=dtype).log_softmax(-1)
    # labels anywhere but the blank (CTC's contract)
    labels = [c for c in range(C) if c != blank]
    pick = lambda shape: torch.tensor(labels)[torch.randint(len(labels), shape, generator=g)]
    targets = pick((sum(tl),)) if concat else pick((N, max(tl + [1]) + 1))
    return lp, targets


def loss_and_grad(lp, targets, il, tl, dev, **kw):
    x = lp.to(dev).requires_grad_()
    loss = F.ctc_loss(x, targets.to(dev), torch.tensor(il), torch.tensor(tl), **kw)
    (grad,) = torch.autograd.grad(loss.sum(), x)
    return loss, grad


CASES = [
    # T, N, C, input lengths, target lengths
    (10, 3, 5, [10, 8, 6], [4, 2, 3]),
    (12, 2, 6, [12, 12], [3, 3]),
    (6, 2, 4, [0, 6], [0, 2]),  # an empty input, an empty target
    (4, 2, 6, [4, 3], [5, 2]),  # the first cannot align: infinite loss
    (1, 2, 3, [1, 1], [1, 0]),
    (30, 4, 9, [30, 17, 5, 22], [10, 0, 2, 11]),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("concat", [False, True], ids=["padded", "concatenated"])
@pytest.mark.parametrize("T,N,C,il,tl", CASES)
def test_matches_cpu(T, N, C, il, tl, concat, reduction):
    lp, targets = case(T, N, C, tl, concat)
    for zero_infinity in (False, True):
        same(lambda dev: loss_and_grad(lp, targets, il, tl, dev, reduction=reduction,
                                       zero_infinity=zero_infinity),
             rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("blank", [0, 3, 6])
def test_blank_and_dtype(blank, dtype):
    lp, targets = case(9, 3, 7, [3, 4, 2], concat=False, blank=blank, dtype=dtype)
    same(lambda dev: loss_and_grad(lp, targets, [9, 7, 8], [3, 4, 2], dev, blank=blank,
                                   reduction="none"),
         rtol=1e-5, atol=1e-6)


def test_int32_targets_unbatched_and_strided_log_probs():
    lp, targets = case(8, 2, 5, [3, 2], concat=False)
    same(lambda dev: loss_and_grad(lp, targets.int(), [8, 6], [3, 2], dev), rtol=1e-5, atol=1e-6)
    # unbatched: log_probs [T, C], one target
    same(lambda dev: loss_and_grad(lp[:, 0], targets[0, :3], [8], [3], dev), rtol=1e-5,
         atol=1e-6)
    # [N, T, C] transposed to [T, N, C], as wav2vec2 does
    ntc = lp.transpose(0, 1).contiguous()

    def strided(dev):
        x = ntc.to(dev).requires_grad_()
        loss = F.ctc_loss(x.transpose(0, 1), targets.to(dev), [8, 6], [3, 2])
        return loss, torch.autograd.grad(loss, x)[0]

    same(strided, rtol=1e-5, atol=1e-6)


def test_aten_overloads_and_log_alpha():
    lp, targets = case(7, 3, 5, [2, 3, 1], concat=True)
    il, tl = [7, 5, 6], [2, 3, 1]

    def direct(dev, tensor_lengths):
        lengths = (torch.tensor(il, device=dev), torch.tensor(tl, device=dev)) \
            if tensor_lengths else (il, tl)
        x = lp.to(dev)
        nll, alpha = torch.ops.aten._ctc_loss(x, targets.to(dev), *lengths, 0, False)
        grad = torch.ops.aten._ctc_loss_backward(torch.ones(3, device=dev), x, targets.to(dev),
                                                 *lengths, nll, alpha, 0, False)
        # log_alpha where CPU defines it: t < input length, s < 2L + 1
        mask = torch.zeros(alpha.shape, dtype=torch.bool)
        for n in range(3):
            mask[n, :il[n], :2 * tl[n] + 1] = True
        return nll, alpha.cpu()[mask], grad

    for tensor_lengths in (False, True):
        same(lambda dev: direct(dev, tensor_lengths), rtol=1e-5, atol=1e-6)


def test_new_lengths_reuse_the_programs():
    lp, targets = case(10, 3, 5, [4, 4, 4], concat=False)
    loss_and_grad(lp, targets, [10, 9, 8], [4, 3, 2], DEV)
    before = debug.metrics()["compiles"]
    for il, tl in (([7, 10, 9], [2, 4, 1]), ([10, 10, 10], [4, 4, 4]), ([5, 6, 7], [1, 2, 3])):
        same(lambda dev: loss_and_grad(lp, targets, il, tl, dev), rtol=1e-5, atol=1e-6)
    assert debug.metrics()["compiles"] == before


def test_ctc_training_loop_matches_cpu():
    # A frame classifier trained with nn.CTCLoss, as a speech head is.
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 5))
    tpu = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 5))
    tpu.load_state_dict(cpu.state_dict())
    tpu.to(DEV)
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(3, 12, 6, generator=g)
    targets = torch.randint(1, 5, (3, 4), generator=g)
    il, tl = torch.tensor([12, 10, 11]), torch.tensor([4, 3, 2])
    losses = {}
    for model, dev in ((cpu, "cpu"), (tpu, DEV)):
        opt = torch.optim.Adam(model.parameters(), lr=0.05)
        ctc = torch.nn.CTCLoss(blank=0, zero_infinity=True)
        losses[dev] = []
        for _ in range(5):
            lp = model(feats.to(dev)).log_softmax(-1).transpose(0, 1)
            loss = ctc(lp, targets.to(dev), il.to(dev), tl.to(dev))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[dev].append(loss.item())
    assert losses["cpu"][-1] < losses["cpu"][0]
    torch.testing.assert_close(torch.tensor(losses[DEV]), torch.tensor(losses["cpu"]),
                               rtol=1e-5, atol=1e-5)
    for a, b in zip(cpu.parameters(), tpu.parameters()):
        torch.testing.assert_close(b.detach().cpu(), a.detach(), rtol=1e-4, atol=1e-5)


def _bad(lp_shape=(5, 2, 4), targets=None, il=(5, 5), tl=(2, 2), blank=0,
         dtype=torch.float32, tensor_lengths=False):
    def fn(dev):
        lp = torch.randn(*lp_shape, dtype=dtype).log_softmax(-1).to(dev)
        tg = (torch.ones(2, 3, dtype=torch.long) if targets is None else targets).to(dev)
        lengths = (torch.tensor(il, device=dev), torch.tensor(tl, device=dev)) \
            if tensor_lengths else (list(il), list(tl))
        return torch.ops.aten._ctc_loss(lp, tg, *lengths, blank, False)[0]
    return fn


BAD = {
    "bfloat16": _bad(dtype=torch.bfloat16),
    "float targets": _bad(targets=torch.ones(2, 3)),
    "2-d log_probs": _bad(lp_shape=(5, 4)),
    "3-d targets": _bad(targets=torch.ones(2, 3, 1, dtype=torch.long)),
    "blank too large": _bad(blank=4),
    "negative blank": _bad(blank=-1),
    "input_lengths size": _bad(il=(5,)),
    "target_lengths size": _bad(tl=(2, 2, 2)),
    "negative target length": _bad(tl=(-1, 2)),
    "targets too short": _bad(tl=(4, 2)),
    "concatenated size": _bad(targets=torch.ones(5, dtype=torch.long)),
    "padded batch": _bad(targets=torch.ones(3, 3, dtype=torch.long)),
    "input length too large": _bad(il=(6, 5)),
    "negative input length": _bad(il=(-1, 5)),
    "float lengths": _bad(tensor_lengths=True, il=(5.0, 5.0)),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_like_cpu(name):
    same(BAD[name])
    err = outcome(BAD[name], DEV)
    assert "ctc" in str(err).lower() or "input_lengths" in str(err), err
    assert torch.ones(2, device=DEV).add(1).sum().item() == 4  # still usable
