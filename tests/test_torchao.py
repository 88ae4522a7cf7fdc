"""torchao on tpu (issue 29), used as its users use it on CUDA:

* float8 training (convert_to_float8_training, tensorwise and rowwise
  recipes) of a small GPT trains as the same recipe trains on CPU, in
  Strict, DeferAndFuse and compiled, through tpu's torch._scaled_mm;
* MX inference linears (MXFP8, MXFP4) through torchao's real-GEMM path
  (torch._scaled_mm / F.scaled_mm on tpu) equal torchao's emulated CPU
  reference; NVFP4 (static activation scale flow) equals its dequantized
  definition, NVFP4 weight-only equals CPU;
* int8 and int4 weight-only quantize_ of SmolLM2 generates CPU's greedy
  tokens (in tests/test_hf_real_weights.py, beside the model's loader).

(Int4WeightOnlyConfig's packing formats need CUDA kernels (mslk, tinygemm)
that CPU lacks too; IntxWeightOnlyConfig is torchao's portable int4.)"""

import copy
import sys
import warnings

import pytest
import torch
import torch.nn as nn

import torch_tpu
from model_zoo import GPT, gpt_loss

DEV = "tpu"

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import torchao  # noqa: F401
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    from torchao.float8.float8_linear import Float8Linear
    from torchao.prototype.mx_formats import (MXDynamicActivationMXWeightConfig,
                                              NVFP4DynamicActivationNVFP4WeightConfig,
                                              NVFP4WeightOnlyConfig)
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor
    from torchao.quantization import quantize_
    from torchao.quantization.quantize_.common import KernelPreference


class Calls:
    """Counts calls of a torch function that torchao looks up at call time."""

    def __init__(self, monkeypatch, owner, name):
        self.count = 0
        real = getattr(owner, name)

        def counted(*args, **kwargs):
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)


# --- float8 training ---------------------------------------------------------

def train_float8_gpt(device, recipe, mode="strict", steps=3):
    torch.manual_seed(0)
    model = GPT(vocab=64, ctx=17, d=32, heads=4, layers=2, p=0.0).to(device)
    convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name(recipe))
    converted = sum(isinstance(m, Float8Linear) for m in model.modules())
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    loss_of = gpt_loss
    if mode == "compiled":
        torch._dynamo.reset()
        loss_of = torch.compile(gpt_loss, backend="tpu")
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, 64, (4, 17), generator=g).to(device)

        def step():
            loss = loss_of(model, idx)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss.detach()

        if mode == "defer_and_fuse":
            with torch_tpu.eager_mode("defer_and_fuse"):
                losses.append(step().item())
        else:
            losses.append(step().item())
    return converted, losses, [p.detach().cpu() for p in model.parameters()]


@pytest.fixture(scope="module")
def cpu_float8_runs():
    return {r: train_float8_gpt("cpu", r) for r in ("tensorwise", "rowwise")}


@pytest.mark.parametrize("recipe,mode", [("tensorwise", "strict"), ("tensorwise", "defer_and_fuse"),
                                         ("tensorwise", "compiled"), ("rowwise", "strict"),
                                         ("rowwise", "compiled")])
def test_float8_training_of_a_small_gpt_matches_cpu(recipe, mode, cpu_float8_runs, monkeypatch):
    scaled_mm = Calls(monkeypatch, torch, "_scaled_mm")
    converted, losses, params = train_float8_gpt(DEV, recipe, mode)
    want_converted, want_losses, want_params = cpu_float8_runs[recipe]
    assert converted == want_converted == 9  # every Linear: 4 per block, and the head
    if mode != "compiled":  # (compiled: traced once, then the graph calls the op)
        assert scaled_mm.count == 3 * 3 * converted  # forward, 2 in backward, per step
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(want_losses), rtol=1e-5, atol=0)
    for got, want in zip(params, want_params):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_float8_training_differs_from_full_precision_training(cpu_float8_runs):
    # what makes the comparison above mean something: float8 moves the losses
    torch.manual_seed(0)
    model = GPT(vocab=64, ctx=17, d=32, heads=4, layers=2, p=0.0)
    idx = torch.randint(0, 64, (4, 17), generator=torch.Generator().manual_seed(1))
    full = gpt_loss(model, idx).item()
    assert abs(full - cpu_float8_runs["tensorwise"][1][0]) > 1e-4


# --- MX and NVFP4 linears ----------------------------------------------------

def small_mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(128, 256, bias=False), nn.ReLU(),
                         nn.Linear(256, 64, bias=False)).bfloat16()


@pytest.mark.parametrize("elem", [torch.float8_e4m3fn, torch.float4_e2m1fn_x2],
                         ids=["mxfp8", "mxfp4"])
def test_mx_linears_through_scaled_mm_equal_torchaos_cpu_reference(elem, monkeypatch):
    mlp = small_mlp()
    x = torch.randn(32, 128, generator=torch.Generator().manual_seed(2)).bfloat16()

    def quantized(device, preference):
        m = copy.deepcopy(mlp).to(device)
        quantize_(m, MXDynamicActivationMXWeightConfig(activation_dtype=elem, weight_dtype=elem,
                                                       kernel_preference=preference))
        return m

    want = quantized("cpu", KernelPreference.EMULATED)(x)
    calls = [Calls(monkeypatch, torch, "_scaled_mm"),
             Calls(monkeypatch, torch.nn.functional, "scaled_mm")]
    got = quantized(DEV, KernelPreference.AUTO)(x.to(DEV))
    assert sum(c.count for c in calls) == 2  # the real block-scaled GEMM, one per linear
    assert got.dtype == want.dtype and torch.equal(got.cpu(), want)


def test_nvfp4_linear_equals_its_dequantized_definition(monkeypatch):
    # (the dynamic config asserts a Blackwell GPU; the static flow does not)
    mlp = nn.Sequential(nn.Linear(128, 256, bias=False)).bfloat16()
    x = torch.randn(32, 128, generator=torch.Generator().manual_seed(3)).bfloat16()
    m = copy.deepcopy(mlp).to(DEV)
    quantize_(m, NVFP4DynamicActivationNVFP4WeightConfig(step="prepare", use_triton_kernel=False))
    m(x.to(DEV))
    quantize_(m, NVFP4DynamicActivationNVFP4WeightConfig(step="convert", use_triton_kernel=False))
    scaled_mm = Calls(monkeypatch, torch, "_scaled_mm")
    got = m(x.to(DEV)).cpu()
    assert scaled_mm.count == 1
    w = m[0].weight
    assert isinstance(w, NVFP4Tensor)
    xq = NVFP4Tensor.to_nvfp4(x, per_tensor_scale=w.act_per_tensor_scale.cpu(),
                              is_swizzled_scales=True, use_triton_kernel=False)
    wq = NVFP4Tensor.to_nvfp4(mlp[0].weight, per_tensor_scale=w.per_tensor_scale.cpu(),
                              is_swizzled_scales=True)
    ref = xq.dequantize(torch.float32) @ wq.dequantize(torch.float32).t()
    # torchao rounds the block-scaled product to bfloat16, then multiplies by
    # the tensor scales in bfloat16: two roundings
    torch.testing.assert_close(got.float(), ref, rtol=2 ** -7, atol=1e-3)
    assert (got.float() - ref).abs().max() < 0.05 * ref.abs().max()


def test_nvfp4_weight_only_equals_cpu():
    mlp = small_mlp()
    x = torch.randn(8, 128).bfloat16()
    out = {}
    for device in ("cpu", DEV):
        m = copy.deepcopy(mlp).to(device)
        quantize_(m, NVFP4WeightOnlyConfig())
        out[device] = m(x.to(device)).cpu()
    assert torch.equal(out[DEV], out["cpu"])


def test_torch_stays_2_13():
    assert torch.__version__.startswith("2.13.0"), torch.__version__
    assert "torchao" in sys.modules
