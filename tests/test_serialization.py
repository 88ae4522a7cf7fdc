"""Saving, loading, pickling and copying tpu tensors, as users checkpoint models.

torch.save writes a tpu storage through the host and torch.load puts it
back on tpu (or where map_location says); pickle (and so multiprocessing
queues and libraries that pickle) writes it through PyTorch's legacy
storage format, which wraps the storage's address with at::from_blob.
Views, dtypes and storage sharing (tied weights) must come back as saved.
"""

import copy
import io
import pickle

import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool, torch.complex64]


def sample(dtype):
    t = torch.arange(24).view(4, 6) % 5
    if dtype.is_complex:
        return torch.complex(t.float(), -t.float()).to(dtype)
    return t.to(dtype)


def save_load(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


def legacy_save_load(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    return torch.load(buffer, weights_only=False)


ROUND_TRIPS = {
    "torch.save": save_load,
    "torch.save_legacy": legacy_save_load,
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tensor_round_trip(how, dtype):
    t = sample(dtype).to(DEV)
    back = ROUND_TRIPS[how](t)
    assert back.device == t.device and back.dtype == dtype
    assert torch.equal(back.cpu(), sample(dtype))


def views_of(device):
    base = torch.arange(24.0).view(4, 6).to(device)
    return {"base": base, "t": base.t(), "slice": base[1:, ::2], "row": base[2]}


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_views_keep_their_layout_and_sharing(how):
    views = views_of(DEV)
    back = ROUND_TRIPS[how](views)
    for name, v in views.items():
        assert back[name].stride() == v.stride(), name
        assert back[name].storage_offset() == v.storage_offset(), name
        assert torch.equal(back[name].cpu(), v.cpu()), name
    # Storage sharing as on CPU: torch.save and deepcopy keep one storage
    # (a write through one view shows in all); pickle gives each tensor its
    # own, on CPU too.
    back_cpu = ROUND_TRIPS[how](views_of("cpu"))
    for b in (back, back_cpu):
        b["base"][2, 0] = -1.0
    assert back["row"][0].item() == back_cpu["row"][0].item()
    assert back["t"][0, 2].item() == back_cpu["t"][0, 2].item()
    assert (back_cpu["row"][0].item() == -1.0) == (how != "pickle")


def tied_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10, bias=False))
    model[1].weight = model[0].weight
    return model.to(DEV)


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_module_with_tied_weights(how):
    if how == "torch.save":
        back = save_load(tied_model(), weights_only=False)
    else:
        back = ROUND_TRIPS[how](tied_model())
    assert back[1].weight is back[0].weight
    assert back[0].weight.device.type == DEV
    x = torch.tensor([[1, 2, 3]], device=DEV)
    torch.testing.assert_close(back(x).cpu(), tied_model()(x).cpu())


def test_state_dict_map_location():
    model = tied_model()
    state = model.state_dict()
    on_cpu = save_load(state, map_location="cpu")
    assert all(v.device.type == "cpu" for v in on_cpu.values())
    assert torch.equal(on_cpu["0.weight"], state["0.weight"].cpu())
    # a CPU checkpoint loaded straight onto tpu, and into a tpu model
    to_tpu = save_load({k: v.cpu() for k, v in state.items()}, map_location=DEV)
    assert all(v.device.type == DEV for v in to_tpu.values())
    fresh = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10, bias=False))
    fresh.to(DEV).load_state_dict(on_cpu)
    assert torch.equal(fresh[1].weight.cpu(), state["1.weight"].cpu())


def test_optimizer_state_round_trip():
    model = tied_model()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    model(torch.tensor([[1, 2]], device=DEV)).sum().backward()
    opt.step()
    back = save_load(opt.state_dict())
    saved = opt.state_dict()["state"][0]
    for key in ("exp_avg", "exp_avg_sq"):
        assert back["state"][0][key].device.type == DEV
        assert torch.equal(back["state"][0][key].cpu(), saved[key].cpu())


def test_pickled_tensor_written_after_pending_work():
    # the value pickled is the value after every op queued before the call
    t = torch.ones(3, device=DEV)
    for _ in range(5):
        t.mul_(2)
    assert pickle.loads(pickle.dumps(t)).cpu().tolist() == [32.0, 32.0, 32.0]
