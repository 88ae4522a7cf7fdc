"""Diffusers on tpu: tiny pipelines built offline from configs (no hub),
moved with pipe.to("tpu"), must produce the CPU's images. The noise comes
from a seeded CPU generator, as diffusers draws it when the generator's
device differs from the pipeline's, so both devices denoise the same
latents. A denoiser training step gives the CPU's gradients."""

import copy
import json

import numpy as np
import pytest
import torch
from diffusers import (AutoencoderKL, DDIMScheduler, DDPMPipeline, DDPMScheduler,
                       EulerDiscreteScheduler, StableDiffusionPipeline,
                       UNet2DConditionModel, UNet2DModel)
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

import torch_tpu  # noqa: F401


IMAGE_ATOL = 1e-5  # images are in [0, 1]


def tiny_unet():
    torch.manual_seed(0)
    return UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(16, 32), norm_num_groups=8,
                       down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                       up_block_types=("AttnUpBlock2D", "UpBlock2D")).eval()


def run_both(pipe, **kwargs):
    """The pipeline's images on the CPU, then after pipe.to("tpu")."""
    want = pipe(generator=torch.Generator().manual_seed(0), output_type="np", **kwargs).images
    pipe.to("tpu")
    assert pipe.device.type == "tpu"
    got = pipe(generator=torch.Generator().manual_seed(0), output_type="np", **kwargs).images
    assert got.shape == want.shape
    return got, want


def test_ddpm_pipeline_matches_cpu():
    # DDPM adds fresh noise at every step: the seeded draws must line up too.
    pipe = DDPMPipeline(unet=tiny_unet(), scheduler=DDPMScheduler(num_train_timesteps=50))
    pipe.set_progress_bar_config(disable=True)
    got, want = run_both(pipe, batch_size=2, num_inference_steps=4)
    np.testing.assert_allclose(got, want, atol=IMAGE_ATOL, rtol=0)
    assert np.abs(want - want[:1]).max() > 0.01  # two different images, not a constant


def clip_tokenizer(tmp_path):
    # A character-level CLIP BPE vocabulary written on the spot: the tokenizer
    # class users load, with no download.
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for c in "abcdefghijklmnopqrstuvwxyz":
        vocab[c] = len(vocab)
        vocab[c + "</w>"] = len(vocab)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"),
                         model_max_length=16)


def tiny_stable_diffusion(tmp_path, scheduler):
    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        block_out_channels=(8, 16), layers_per_block=1, sample_size=16, in_channels=4,
        out_channels=4, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=16,
        norm_num_groups=4, attention_head_dim=4)
    vae = AutoencoderKL(block_out_channels=(8, 16), in_channels=3, out_channels=3,
                        latent_channels=4, norm_num_groups=4,
                        down_block_types=("DownEncoderBlock2D",) * 2,
                        up_block_types=("UpDecoderBlock2D",) * 2, sample_size=32)
    text = CLIPTextModel(CLIPTextConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
                                        num_hidden_layers=2, num_attention_heads=2,
                                        max_position_embeddings=16, bos_token_id=0,
                                        eos_token_id=1, pad_token_id=1))
    pipe = StableDiffusionPipeline(unet=unet, vae=vae, text_encoder=text,
                                   tokenizer=clip_tokenizer(tmp_path), scheduler=scheduler,
                                   safety_checker=None, feature_extractor=None,
                                   requires_safety_checker=False)
    pipe.set_progress_bar_config(disable=True)
    return pipe


SCHEDULERS = {
    "ddim": lambda: DDIMScheduler(num_train_timesteps=100, beta_schedule="scaled_linear",
                                  clip_sample=False, set_alpha_to_one=False, steps_offset=1),
    "euler": lambda: EulerDiscreteScheduler(num_train_timesteps=100,
                                            beta_schedule="scaled_linear", steps_offset=1),
}


@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
def test_stable_diffusion_pipeline_matches_cpu(tmp_path, scheduler):
    # Text encoder, classifier-free guidance, cross-attention UNet, VAE decode.
    pipe = tiny_stable_diffusion(tmp_path, SCHEDULERS[scheduler]())
    got, want = run_both(pipe, prompt=["a cat on a mat", "a lighthouse"],
                         negative_prompt=["blurry", ""], num_inference_steps=3,
                         guidance_scale=5.0, height=32, width=32)
    np.testing.assert_allclose(got, want, atol=IMAGE_ATOL, rtol=0)
    assert {p.device.type for p in pipe.unet.parameters()} == {"tpu"}


def test_denoiser_training_step_matches_cpu():
    # The epsilon-prediction loss of diffusion training, one SGD step.
    cpu = tiny_unet().train()
    tpu = copy.deepcopy(cpu).to("tpu")
    sched = DDPMScheduler(num_train_timesteps=50)
    g = torch.Generator().manual_seed(3)
    images = torch.randn(2, 3, 16, 16, generator=g)
    noise = torch.randn(images.shape, generator=g)
    steps = torch.tensor([5, 40])
    for model, dev in ((cpu, "cpu"), (tpu, "tpu")):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        noisy = sched.add_noise(images.to(dev), noise.to(dev), steps.to(dev))
        loss = torch.nn.functional.mse_loss(model(noisy, steps.to(dev)).sample, noise.to(dev))
        loss.backward()
        opt.step()
        model.loss = loss.detach().cpu()
    torch.testing.assert_close(tpu.loss, cpu.loss, rtol=1e-5, atol=1e-6)
    for (name, a), b in zip(cpu.named_parameters(), tpu.parameters()):
        torch.testing.assert_close(b.cpu(), a.detach(), rtol=1e-4, atol=1e-5, msg=name)
