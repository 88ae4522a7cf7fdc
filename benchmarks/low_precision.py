"""Low-precision linear layers on tpu against bfloat16 on the same shapes,
side by side in one run: time per call and weight memory.

Run: python benchmarks/low_precision.py [--iters 20] [--repeats 3] [--compiled]

For each (tokens, in_features, out_features):
- bf16:    nn.Linear in bfloat16 (the baseline);
- float8:  the weight stored as float8_e4m3fn with one float32 scale; each
           call scales the activation to float8 (its amax, tensor-wise, as
           torchao's float8 recipes do) and runs torch._scaled_mm to
           bfloat16: one f8 x f8 dot with float32 sums;
- mxfp4:   torchao's MXFP4 inference linear (MXDynamicActivationMXWeightConfig,
           float4_e2m1fn_x2 data, an e8m0 scale per 32 elements), through
           tpu's block-scaled torch._scaled_mm path.
Columns: ms per call, each format's time / bf16's, and the weight's bytes
as a fraction of bf16's. --compiled times each layer inside
torch.compile(backend="tpu") instead of Strict eager. Each is warmed up
(compiled) first; best of --repeats; timings end with torch.tpu.synchronize().

On the XLA CPU plugin the 8- and 4-bit products are computed in float32
(XLA's CPU backend has no narrow-float GEMM), so the time ratios there show
the cost of the formats, not their gain; on a GPU plugin XLA takes the f8
dot to its FP8 GEMMs (run scripts/gpu_check.sh there). The memory column
holds everywhere.
"""

import argparse
import copy
import sys
import warnings
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eager_overhead import per_call  # noqa: E402

import torch_tpu  # noqa: E402,F401  (registers the tpu device)

DEV = "tpu"
F8_MAX = torch.finfo(torch.float8_e4m3fn).max
SHAPES = [(32, 1024, 1024), (256, 1024, 4096), (1024, 2048, 2048)]


class Float8Linear(nn.Module):
    """A linear layer whose weight is float8_e4m3fn with a tensor-wise scale."""

    def __init__(self, linear):
        super().__init__()
        w = linear.weight.detach().float()
        scale = F8_MAX / w.abs().max().clamp(min=1e-12)
        self.register_buffer("weight_f8", (w * scale).to(torch.float8_e4m3fn))
        self.register_buffer("weight_inv_scale", (1 / scale).reshape(()))

    def forward(self, x):
        amax = x.abs().max().float().clamp(min=1e-12)
        scale = F8_MAX / amax
        x_f8 = (x.float() * scale).clamp(-F8_MAX, F8_MAX).to(torch.float8_e4m3fn)
        return torch._scaled_mm(x_f8, self.weight_f8.t(), (1 / scale).reshape(()),
                                self.weight_inv_scale, out_dtype=torch.bfloat16)


def mxfp4_linear(linear):
    from torchao.prototype.mx_formats import MXDynamicActivationMXWeightConfig
    from torchao.quantization import quantize_

    m = nn.Sequential(copy.deepcopy(linear))
    quantize_(m, MXDynamicActivationMXWeightConfig(activation_dtype=torch.float4_e2m1fn_x2,
                                                   weight_dtype=torch.float4_e2m1fn_x2))
    return m


def weight_bytes(module):
    total = 0
    for t in list(module.parameters()) + list(module.buffers()):
        parts = [t]
        if hasattr(t, "qdata"):  # a torchao tensor subclass: its data and scales
            parts = [t.qdata, t.scale]
        total += sum(p.numel() * p.element_size() for p in parts)
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compiled", action="store_true")
    args = parser.parse_args()

    print(f"{'Strict eager' if not args.compiled else 'torch.compile(backend=tpu)'}, "
          f"ms per call (best of {args.repeats} x {args.iters})")
    print(f"{'tokens x in x out':>20} {'bf16':>8} {'float8':>8} {'mxfp4':>8} "
          f"{'f8/bf16':>8} {'fp4/bf16':>9} {'f8 mem':>7} {'fp4 mem':>8}")
    for tokens, fin, fout in SHAPES:
        torch.manual_seed(0)
        linear = nn.Linear(fin, fout, bias=False).bfloat16()
        x = torch.randn(tokens, fin).bfloat16().to(DEV)
        layers = {"bf16": copy.deepcopy(linear).to(DEV),
                  "float8": Float8Linear(linear).to(DEV)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layers["mxfp4"] = mxfp4_linear(linear.to(DEV))
        ms, mem = {}, {}
        for name, layer in layers.items():
            fn = torch.compile(layer, backend="tpu") if args.compiled else layer
            with torch.no_grad():
                ms[name] = 1e3 * per_call(lambda: fn(x), args.iters, args.repeats,
                                          torch.tpu.synchronize)
            mem[name] = weight_bytes(layer)
        print(f"{f'{tokens} x {fin} x {fout}':>20} {ms['bf16']:8.3f} {ms['float8']:8.3f} "
              f"{ms['mxfp4']:8.3f} {ms['float8'] / ms['bf16']:8.2f} "
              f"{ms['mxfp4'] / ms['bf16']:9.2f} {mem['float8'] / mem['bf16']:7.3f} "
              f"{mem['mxfp4'] / mem['bf16']:8.3f}")


if __name__ == "__main__":
    main()
