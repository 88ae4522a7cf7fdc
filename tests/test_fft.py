"""torch.fft on tpu against the CPU: every transform family (c2c, r2c, c2r and
the Hermitian ones) with each norm, lengths padded and trimmed, several dims,
complex64/128 and float32/64 inputs, strided inputs, out=, gradients, stft,
and CPU's errors; FNet's Fourier mixing runs as in Transformers."""

import pytest
import torch

import torch_tpu  # noqa: F401
from cpu_reference import DEV, same

TOL = dict(rtol=1e-5, atol=1e-5)
G = torch.Generator().manual_seed(0)


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=G, dtype=dtype)


REAL = rand(4, 6, 8)
CPLX = rand(4, 6, 8, dtype=torch.complex64)

TRANSFORMS = {
    "fft": (lambda x, norm: torch.fft.fft(x, norm=norm), CPLX),
    "fft_real_input": (lambda x, norm: torch.fft.fft(x, norm=norm), REAL),
    "fft_n_pad": (lambda x, norm: torch.fft.fft(x, n=11, dim=1, norm=norm), CPLX),
    "fft_n_trim": (lambda x, norm: torch.fft.fft(x, n=3, dim=0, norm=norm), CPLX),
    "ifft": (lambda x, norm: torch.fft.ifft(x, norm=norm), CPLX),
    "fft2": (lambda x, norm: torch.fft.fft2(x, norm=norm), CPLX),
    "fftn_all": (lambda x, norm: torch.fft.fftn(x, norm=norm), CPLX),
    "fftn_4d": (lambda x, norm: torch.fft.fftn(x, norm=norm), rand(2, 3, 4, 5, dtype=torch.complex64)),
    "ifftn_dims": (lambda x, norm: torch.fft.ifftn(x, dim=(0, 2), norm=norm), CPLX),
    "rfft": (lambda x, norm: torch.fft.rfft(x, norm=norm), REAL),
    "rfft_odd": (lambda x, norm: torch.fft.rfft(x, n=7, norm=norm), REAL),
    "rfft2": (lambda x, norm: torch.fft.rfft2(x, norm=norm), REAL),
    "rfftn": (lambda x, norm: torch.fft.rfftn(x, norm=norm), REAL),
    "irfft": (lambda x, norm: torch.fft.irfft(x, norm=norm), CPLX),
    "irfft_n": (lambda x, norm: torch.fft.irfft(x, n=9, norm=norm), CPLX),
    "irfftn": (lambda x, norm: torch.fft.irfftn(x, norm=norm), CPLX),
    "hfft": (lambda x, norm: torch.fft.hfft(x, norm=norm), CPLX),
    "ihfft": (lambda x, norm: torch.fft.ihfft(x, norm=norm), REAL),
    "hfft2": (lambda x, norm: torch.fft.hfft2(x, norm=norm), CPLX),
    "ihfftn": (lambda x, norm: torch.fft.ihfftn(x, norm=norm), REAL),
    "round_trip": (lambda x, norm: torch.fft.irfft(torch.fft.rfft(x, norm=norm), n=8, norm=norm),
                   REAL),
}


@pytest.mark.parametrize("norm", [None, "ortho", "forward", "backward"])
@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_matches_cpu(name, norm):
    fn, x = TRANSFORMS[name]
    same(lambda dev: fn(x.to(dev), norm), **TOL)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_double_precision(dtype):
    x = rand(3, 5, 6, dtype=dtype)
    same(lambda dev: torch.fft.fftn(x.to(dev)), rtol=1e-12, atol=1e-12)
    if not dtype.is_complex:
        same(lambda dev: torch.fft.rfft2(x.to(dev)), rtol=1e-12, atol=1e-12)


def test_strided_inputs():
    same(lambda dev: torch.fft.fft(CPLX.to(dev).transpose(0, 2), dim=0), **TOL)
    same(lambda dev: torch.fft.rfft(REAL.to(dev)[:, ::2], dim=1), **TOL)
    same(lambda dev: torch.fft.ifft(CPLX.to(dev)[1:, :, 2:6]), **TOL)


def test_out_variants():
    def fn(dev):
        out_c = torch.empty(0, dtype=torch.complex64, device=dev)
        out_r = torch.empty(0, device=dev)
        torch.fft.fft(CPLX.to(dev), out=out_c)
        torch.fft.irfft(CPLX.to(dev), out=out_r)
        return out_c, out_r
    same(fn, **TOL)
    same(lambda dev: torch.fft.fft(CPLX.to(dev), out=torch.empty(0, device=dev)))  # wrong dtype


@pytest.mark.parametrize("loss", ["fftn_real", "rfft_abs", "irfft_rfft", "fft_complex"])
def test_gradients(loss):
    fns = {
        "fftn_real": lambda x: torch.fft.fftn(x, dim=(1, 2)).real.sum(),
        "rfft_abs": lambda x: torch.fft.rfft(x, norm="ortho").abs().sum(),
        "irfft_rfft": lambda x: torch.fft.irfft(torch.fft.rfft(x) * 2, n=6).pow(2).sum(),
        "fft_complex": lambda x: torch.view_as_real(torch.fft.ifft(x.to(torch.complex64))).sum(),
    }
    x = rand(3, 8, 6)

    def fn(dev):
        xd = x.to(dev).requires_grad_()
        return torch.autograd.grad(fns[loss](xd), xd)[0]
    same(fn, rtol=1e-4, atol=1e-5)


def test_stft_and_istft():
    signal = rand(2, 200)

    def fn(dev):
        window = torch.hann_window(32, device=dev)
        spec = torch.stft(signal.to(dev), 32, hop_length=8, window=window, return_complex=True)
        back = torch.istft(spec, 32, hop_length=8, window=window, length=200)
        return spec, back
    same(fn, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["half", "bfloat16", "c2c_real", "r2c_complex", "c2r_real",
                                  "dup_dims", "bad_n"])
def test_bad_input_raises_like_cpu(case):
    fns = {
        "half": lambda dev: torch.fft.fft(REAL.to(dev, torch.float16)),
        "bfloat16": lambda dev: torch.fft.rfft(REAL.to(dev, torch.bfloat16)),
        "c2c_real": lambda dev: torch._fft_c2c(REAL.to(dev), [0], 0, True),
        "r2c_complex": lambda dev: torch._fft_r2c(CPLX.to(dev), [0], 0, True),
        "c2r_real": lambda dev: torch._fft_c2r(REAL.to(dev), [0], 0, 4),
        "dup_dims": lambda dev: torch.fft.fftn(CPLX.to(dev), dim=(1, 1)),
        "bad_n": lambda dev: torch.fft.fft(CPLX.to(dev), n=0),
    }
    same(fns[case])


def test_fnet_fourier_mixing_trains_like_cpu():
    # Transformers' FNet mixes tokens with fftn(...).real (no CPU fallback).
    transformers = pytest.importorskip("transformers")
    cfg = transformers.FNetConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2,
                                  intermediate_size=32, max_position_embeddings=16,
                                  hidden_dropout_prob=0.0)
    torch.manual_seed(0)
    cpu = transformers.FNetForMaskedLM(cfg)
    tpu = transformers.FNetForMaskedLM(cfg)
    tpu.load_state_dict(cpu.state_dict())
    tpu.to(DEV)
    ids = torch.randint(0, 64, (2, 10), generator=G)
    for model, dev in ((cpu, "cpu"), (tpu, DEV)):
        out = model(input_ids=ids.to(dev), labels=ids.to(dev))
        out.loss.backward()
        model.result = (out.loss.detach().cpu(), model.fnet.embeddings.word_embeddings.weight.grad.cpu())
    torch.testing.assert_close(tpu.result[0], cpu.result[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(tpu.result[1], cpu.result[1], rtol=1e-4, atol=1e-5)
