"""Hugging Face Transformers architectures, built tiny and offline, run on tpu
and compared with the CPU.

Each architecture is built from a small config (no hub, no tokenizer), in
float32 and eval mode, copied to tpu, and run forward and backward on both
devices with the same inputs: every output tensor and every parameter
gradient must match the CPU's (rtol 1e-4, atol 1e-4). Decoders also run
greedy `generate`, which must give the CPU's tokens.

Every model runs in a child process (this file with --child), so an abort or
a hang in one is reported as `crash` or `timeout` and the run goes on.

    python3 tools/model_zoo.py                      # all architectures
    python3 tools/model_zoo.py --only llama,bert    # some of them
    python3 tools/model_zoo.py --subset ci          # the CI subset
    python3 tools/model_zoo.py --list               # names, and what is left out
    python3 tools/model_zoo.py --json zoo.json      # also write every result

Phases, reported separately: `fwd_bwd` (the model's default attention,
usually SDPA), `fwd_bwd_eager` (attn_implementation="eager", when the
default is not already eager) and `generate` (decoders). Statuses:

    pass        values (and tokens) match the CPU's; "pass*" when some
                tensor is outside the tolerance but tpu is as close to a
                float64 run of the model as the CPU is (float32 rounding of
                an ill-conditioned sum; the float64 run is the reference)
    mismatch    a tensor, gradient or token differs (the worst one is named)
    missing_op  tpu has no lowering for an operator (named)
    error       tpu raised something else while the CPU did not
    cpu_error   the CPU itself failed: the model is left out of the pass rate
    crash       the child died (a signal, an abort) before reporting
    timeout     the child ran past --timeout and was killed
    not_run     an earlier phase's crash or timeout left no time for it
    n/a         the phase does not apply (the default attention is eager)
"""

import argparse
import collections
import copy
import dataclasses
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

import torch

RTOL = ATOL = 1e-4
# A tensor outside that tolerance still passes ("pass*") when tpu's error
# against a float64 run of the model is at most this many times the CPU's.
FLOAT64_SLACK = 1.25
DEFAULT_TIMEOUT = 300.0
BATCH, SEQ = 2, 8
VOCAB = 128
PAD, BOS, EOS = 0, 1, 2  # special ids kept below FIRST_ID in every text config
FIRST_ID = 3
NEW_TOKENS = 8

MISSING_OP = re.compile(
    r"The operator '(aten::[^']+)' is not currently implemented for the tpu device")


# ---------------------------------------------------------------------------
# Inputs. Each builder takes the model's config and a seeded CPU generator and
# returns the forward's keyword arguments (labels included where the head has
# a loss). The same dict, moved, feeds the tpu copy.

def _ids(gen, batch, length, vocab):
    return torch.randint(FIRST_ID, vocab, (batch, length), generator=gen)


def _text_mask():
    # The last two positions of row 1 are padding: exercises the mask path
    # without leaving any query with no key to attend to.
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    mask[1, -2:] = 0
    return mask


def causal_lm_inputs(cfg, gen):
    ids, mask = _ids(gen, BATCH, SEQ, cfg.vocab_size), _text_mask()
    return {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}


def masked_lm_inputs(cfg, gen):
    ids, mask = _ids(gen, BATCH, SEQ, cfg.vocab_size), _text_mask()
    # Loss on every other position, as if those tokens had been masked.
    labels = ids.clone()
    labels[:, 1::2] = -100
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def classify_text_inputs(cfg, gen):
    ids, mask = _ids(gen, BATCH, SEQ, cfg.vocab_size), _text_mask()
    labels = torch.randint(0, cfg.num_labels, (BATCH,), generator=gen)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def seq2seq_inputs(cfg, gen):
    ids, mask = _ids(gen, BATCH, SEQ, cfg.vocab_size), _text_mask()
    # The model derives decoder_input_ids by shifting the labels right.
    labels = _ids(gen, BATCH, SEQ - 2, getattr(cfg, "decoder_vocab_size", None) or cfg.vocab_size)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def image_inputs(cfg, gen):
    size = getattr(cfg, "image_size", 32)
    size = size[0] if isinstance(size, (list, tuple)) else size
    pixels = torch.randn(BATCH, getattr(cfg, "num_channels", 3), size, size, generator=gen)
    labels = torch.randint(0, cfg.num_labels, (BATCH,), generator=gen)
    return {"pixel_values": pixels, "labels": labels}


def ctc_inputs(cfg, gen):
    # 400 samples give 39 frames with the two-layer feature encoder below:
    # enough for 4 CTC targets.
    audio = torch.randn(BATCH, 400, generator=gen)
    return {"input_values": audio, "labels": _ids(gen, BATCH, 4, cfg.vocab_size)}


def whisper_inputs(cfg, gen):
    # The encoder's two convolutions halve the frames to max_source_positions.
    frames = 2 * cfg.max_source_positions
    features = torch.randn(BATCH, cfg.num_mel_bins, frames, generator=gen)
    return {"input_features": features, "labels": _ids(gen, BATCH, SEQ - 2, cfg.vocab_size)}


def speech_to_text_inputs(cfg, gen):
    features = torch.randn(BATCH, 16, cfg.input_feat_per_channel, generator=gen)
    mask = torch.ones(BATCH, 16, dtype=torch.long)
    return {"input_features": features, "attention_mask": mask,
            "labels": _ids(gen, BATCH, SEQ - 2, cfg.vocab_size)}


def detection_inputs(cfg, gen):
    # No labels: DETR's loss (the Hungarian matcher) needs Pillow through
    # transformers' box helpers, which is not installed.
    pixels = torch.randn(BATCH, 3, 64, 64, generator=gen)
    return {"pixel_values": pixels, "pixel_mask": torch.ones(BATCH, 64, 64, dtype=torch.long)}


def clip_inputs(cfg, gen):
    text = cfg.text_config
    size = cfg.vision_config.image_size
    return {"input_ids": _ids(gen, BATCH, SEQ, text.vocab_size), "attention_mask": _text_mask(),
            "pixel_values": torch.randn(BATCH, 3, size, size, generator=gen), "return_loss": True}


# ---------------------------------------------------------------------------
# Architectures.

@dataclasses.dataclass
class Spec:
    name: str                 # the row's name (the model_type unless a type appears twice)
    family: str               # decoder, encoder, encoder-decoder, vision, audio, other
    config: dict              # tiny config: overrides of the model_type's defaults
    inputs: Callable          # (config, generator) -> forward kwargs
    head: str = "AutoModel"   # transformers Auto class
    model_type: str = ""      # defaults to name
    generate: bool = False    # run greedy generate (decoders)
    build: Optional[Callable] = None  # () -> (model, config); replaces the HF build (tests)

    def __post_init__(self):
        self.model_type = self.model_type or self.name


TOKENS = dict(pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS)
# Modern decoders share these names: 4 query heads of 8 over 2 kv heads.
LLAMA_LIKE = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                  max_position_embeddings=64, **TOKENS)
MOE = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32)
BERT_LIKE = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=64, max_position_embeddings=64, pad_token_id=PAD)
BART_LIKE = dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
                 encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                 decoder_ffn_dim=64, max_position_embeddings=64, pad_token_id=PAD, bos_token_id=BOS,
                 eos_token_id=EOS, decoder_start_token_id=EOS, forced_eos_token_id=EOS)
T5_LIKE = dict(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
               num_heads=4, relative_attention_num_buckets=8, pad_token_id=PAD, eos_token_id=EOS,
               decoder_start_token_id=PAD)
VIT_LIKE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                image_size=32, patch_size=8, num_labels=3)
WAV2VEC2_LIKE = dict(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, conv_dim=(16, 16), conv_kernel=(10, 3),
                     conv_stride=(5, 2), num_feat_extract_layers=2, num_conv_pos_embeddings=16,
                     num_conv_pos_embedding_groups=2, pad_token_id=PAD,
                     ctc_loss_reduction="mean")


def decoder(name, config, **kw):
    return Spec(name, "decoder", config, causal_lm_inputs, head="AutoModelForCausalLM",
                generate=True, **kw)


def encoder(name, config, head="AutoModelForMaskedLM", **kw):
    inputs = masked_lm_inputs if head == "AutoModelForMaskedLM" else classify_text_inputs
    return Spec(name, "encoder", config, inputs, head=head, **kw)


def seq2seq(name, config, **kw):
    return Spec(name, "encoder-decoder", config, seq2seq_inputs, head="AutoModelForSeq2SeqLM",
                **kw)


def vision(name, config, **kw):
    return Spec(name, "vision", config, image_inputs, head="AutoModelForImageClassification", **kw)


SPECS = [
    # Decoders (causal LM, labels = inputs, plus greedy generate).
    decoder("gpt2", dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                         **TOKENS)),
    decoder("gpt_neo", dict(vocab_size=VOCAB, hidden_size=32, num_layers=2, num_heads=4,
                            intermediate_size=64, max_position_embeddings=64, window_size=4,
                            attention_types=[[["global", "local"], 1]], **TOKENS)),
    decoder("gpt_neox", dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=4, intermediate_size=64,
                             max_position_embeddings=64, **TOKENS)),
    decoder("gpt_bigcode", dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                multi_query=True, **TOKENS)),
    decoder("gptj", dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, rotary_dim=4,
                         n_positions=64, **TOKENS)),
    decoder("codegen", dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, rotary_dim=4,
                            n_positions=64, n_ctx=64, **TOKENS)),
    decoder("llama", LLAMA_LIKE),
    decoder("mistral", dict(LLAMA_LIKE, sliding_window=4)),
    decoder("mixtral", dict(LLAMA_LIKE, num_local_experts=4, num_experts_per_tok=2)),
    decoder("qwen2", LLAMA_LIKE),
    decoder("qwen2_moe", dict(LLAMA_LIKE, **MOE, shared_expert_intermediate_size=32)),
    decoder("qwen3", LLAMA_LIKE),
    decoder("qwen3_moe", dict(LLAMA_LIKE, **MOE)),
    decoder("phi", dict(LLAMA_LIKE, partial_rotary_factor=0.5)),
    decoder("phi3", LLAMA_LIKE),
    decoder("gemma", LLAMA_LIKE),
    decoder("gemma2", dict(LLAMA_LIKE, sliding_window=4, query_pre_attn_scalar=8)),
    decoder("gemma3_text", dict(LLAMA_LIKE, sliding_window=4, query_pre_attn_scalar=8,
                                layer_types=["sliding_attention", "full_attention"])),
    decoder("falcon", dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, ffn_hidden_size=64, max_position_embeddings=64,
                           **TOKENS)),
    decoder("bloom", dict(vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4, **TOKENS)),
    decoder("opt", dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, ffn_dim=64, word_embed_proj_dim=32,
                        max_position_embeddings=64, **TOKENS)),
    decoder("xglm", dict(vocab_size=VOCAB, d_model=32, num_layers=2, attention_heads=4, ffn_dim=64,
                         max_position_embeddings=64, **TOKENS)),
    decoder("mpt", dict(vocab_size=VOCAB, d_model=32, n_heads=4, n_layers=2, expansion_ratio=2,
                        max_seq_len=64, **TOKENS)),
    decoder("starcoder2", LLAMA_LIKE),
    decoder("olmo", LLAMA_LIKE),
    decoder("olmo2", LLAMA_LIKE),
    decoder("olmoe", dict(LLAMA_LIKE, num_experts=4, num_experts_per_tok=2)),
    decoder("stablelm", LLAMA_LIKE),
    decoder("granite", LLAMA_LIKE),
    decoder("cohere", LLAMA_LIKE),
    # DeepSeek's attention (MLA) has as many kv heads as query heads, and its
    # head_dim is the rope part of a head.
    decoder("deepseek_v3", dict(LLAMA_LIKE, num_key_value_heads=4, head_dim=4, kv_lora_rank=16,
                                q_lora_rank=16, qk_rope_head_dim=4, qk_nope_head_dim=4,
                                v_head_dim=8, n_routed_experts=4, num_experts_per_tok=2,
                                n_group=2, topk_group=1, moe_intermediate_size=32,
                                first_k_dense_replace=1)),
    decoder("gpt_oss", dict(LLAMA_LIKE, num_local_experts=4, num_experts_per_tok=2,
                            sliding_window=4, layer_types=["sliding_attention",
                                                           "full_attention"])),
    decoder("biogpt", dict(BERT_LIKE, bos_token_id=BOS, eos_token_id=EOS)),
    decoder("persimmon", LLAMA_LIKE),
    decoder("nemotron", dict(LLAMA_LIKE, partial_rotary_factor=0.5)),
    decoder("helium", LLAMA_LIKE),
    decoder("glm", LLAMA_LIKE),
    decoder("smollm3", LLAMA_LIKE),
    decoder("openai-gpt", dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64)),
    decoder("ctrl", dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, dff=64,
                         n_positions=64)),
    decoder("mamba", dict(vocab_size=VOCAB, hidden_size=32, state_size=4, num_hidden_layers=2,
                          expand=2, conv_kernel=4, **TOKENS)),

    # Encoders (masked LM with labels; a few with classification heads).
    encoder("bert", BERT_LIKE),
    encoder("bert-cls", BERT_LIKE, model_type="bert", head="AutoModelForSequenceClassification"),
    encoder("roberta", dict(BERT_LIKE, pad_token_id=1)),
    encoder("xlm-roberta", dict(BERT_LIKE, pad_token_id=1)),
    encoder("camembert", dict(BERT_LIKE, pad_token_id=1)),
    encoder("distilbert", dict(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                               max_position_embeddings=64, pad_token_id=PAD)),
    encoder("distilbert-cls", dict(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                   max_position_embeddings=64, pad_token_id=PAD),
            model_type="distilbert", head="AutoModelForSequenceClassification"),
    encoder("albert", dict(BERT_LIKE, embedding_size=16)),
    encoder("electra", dict(BERT_LIKE, embedding_size=16)),
    encoder("deberta", BERT_LIKE),
    encoder("deberta-v2", dict(BERT_LIKE, relative_attention=True, position_buckets=8,
                               pos_att_type=["p2c", "c2p"])),
    encoder("mpnet", dict(BERT_LIKE, pad_token_id=1)),
    encoder("roformer", dict(BERT_LIKE, embedding_size=32)),
    encoder("convbert", dict(BERT_LIKE, embedding_size=32)),
    encoder("modernbert", dict(BERT_LIKE, global_attn_every_n_layers=2, local_attention=4)),
    encoder("megatron-bert", BERT_LIKE),
    encoder("funnel", dict(vocab_size=VOCAB, d_model=32, n_head=4, d_head=8, d_inner=64,
                           block_sizes=[1, 1], pad_token_id=PAD)),
    encoder("esm", dict(BERT_LIKE, pad_token_id=1, mask_token_id=3)),
    encoder("fnet", dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                         intermediate_size=64, max_position_embeddings=64, pad_token_id=PAD)),

    # Encoder-decoders (seq2seq LM with labels).
    seq2seq("t5", T5_LIKE),
    seq2seq("mt5", T5_LIKE),
    seq2seq("bart", BART_LIKE),
    seq2seq("mbart", BART_LIKE),
    seq2seq("pegasus", BART_LIKE),
    seq2seq("marian", dict(BART_LIKE, decoder_vocab_size=VOCAB)),
    seq2seq("blenderbot", BART_LIKE),
    seq2seq("m2m_100", BART_LIKE),
    seq2seq("switch_transformers", dict(T5_LIKE, num_experts=4, expert_capacity=8,
                                        num_sparse_encoder_layers=1,
                                        num_sparse_decoder_layers=1)),

    # Vision (image classification with labels).
    vision("vit", VIT_LIKE),
    # transformers picks among DeiT's two classification heads by `architectures`.
    vision("deit", dict(VIT_LIKE, architectures=["DeiTForImageClassification"])),
    vision("beit", dict(VIT_LIKE, use_relative_position_bias=True)),
    vision("dinov2", dict(VIT_LIKE, patch_size=4)),
    vision("convnext", dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32,
                            num_labels=3)),
    vision("resnet", dict(embedding_size=8, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1],
                          layer_type="basic", num_labels=3)),
    vision("swin", dict(image_size=32, patch_size=2, embed_dim=16, depths=[1, 1],
                        num_heads=[2, 4], window_size=4, num_labels=3)),
    vision("regnet", dict(embedding_size=8, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1],
                          groups_width=8, num_labels=3)),
    vision("mobilenet_v2", dict(image_size=32, depth_multiplier=0.25, num_labels=3)),

    # Audio.
    Spec("wav2vec2", "audio", WAV2VEC2_LIKE, ctc_inputs, head="AutoModelForCTC"),
    Spec("hubert", "audio", WAV2VEC2_LIKE, ctc_inputs, head="AutoModelForCTC"),
    Spec("wavlm", "audio", dict(WAV2VEC2_LIKE, num_buckets=16, max_bucket_distance=32), ctc_inputs,
         head="AutoModelForCTC"),
    Spec("whisper", "audio", dict(BART_LIKE, num_mel_bins=16, max_source_positions=16,
                                  max_target_positions=32, decoder_start_token_id=BOS,
                                  begin_suppress_tokens=None, suppress_tokens=None),
         whisper_inputs, head="AutoModelForSpeechSeq2Seq"),
    Spec("speech_to_text", "audio", dict(BART_LIKE, input_feat_per_channel=16,
                                         conv_channels=16, conv_kernel_sizes=(5, 5),
                                         max_source_positions=64, max_target_positions=64),
         speech_to_text_inputs, head="AutoModelForSpeechSeq2Seq"),

    # Other.
    Spec("detr", "other", dict(
        num_queries=8, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_labels=3,
        backbone_config=dict(model_type="resnet", embedding_size=8, hidden_sizes=[8, 16, 16, 32],
                             depths=[1, 1, 1, 1], layer_type="basic", out_features=["stage4"])),
        detection_inputs, head="AutoModelForObjectDetection"),
    Spec("clip", "other", dict(
        text_config=dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64,
                         pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, image_size=32, patch_size=8),
        projection_dim=16), clip_inputs),
]

# Left out, and why (printed by --list).
LEFT_OUT = {
    "timm_backbone, timm_wrapper": "need the timm package (not installed)",
    "detr's default (timm) backbone, and its loss": "detr is built with a transformers ResNet "
                                                     "backbone and run without labels (the "
                                                     "loss's box helpers need Pillow)",
    "encoder-decoder, vision-encoder-decoder, speech-encoder-decoder":
        "compositions of architectures that have rows here",
    "multimodal chat models (llava, qwen2_vl, idefics, ...)":
        "their inputs need image tokens laid out to match the vision features; not attempted",
}

# Small and fast, one or two of each family, passing today: tests/test_model_zoo.py.
CI_SUBSET = ["llama", "mistral", "bert-cls", "distilbert-cls", "vit", "resnet", "convnext"]

BY_NAME = {s.name: s for s in SPECS}


# ---------------------------------------------------------------------------
# Child side: one model, its phases in order, each reported as a JSON line in
# the result file (begin before, result after), so a death mid-phase names the
# phase.

class Reporter:
    def __init__(self, path):
        self.file = open(path, "a", buffering=1)

    def __call__(self, **event):
        self.file.write(json.dumps(event, default=str) + "\n")
        self.file.flush()


def build_model(spec, attn):
    """(model, config) on CPU, float32, eval mode, seeded: the same weights on
    every call."""
    torch.manual_seed(0)
    if spec.build is not None:
        model, cfg = spec.build()
        return model.eval(), cfg
    import transformers

    cfg = transformers.AutoConfig.for_model(spec.model_type, **copy.deepcopy(spec.config))
    kwargs = {} if attn is None else {"attn_implementation": attn}
    model = getattr(transformers, spec.head).from_config(cfg, **kwargs)
    return model.float().eval(), model.config


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(v, device) for v in obj)
    return obj


def tensors(obj, prefix=""):
    """(name, tensor) for every tensor in a model output: ModelOutput and dict
    fields, list and tuple items, recursively. Other objects (a KV cache) are
    skipped: what they hold already shaped the logits."""
    if isinstance(obj, torch.Tensor):
        yield prefix or "output", obj
    elif isinstance(obj, dict):  # ModelOutput is an OrderedDict
        for k, v in obj.items():
            yield from tensors(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from tensors(v, f"{prefix}.{i}" if prefix else str(i))


def scalar_loss(out):
    """The head's loss when it has one, else the sum of squares of every
    floating output (all heads, e.g. DETR's classes and boxes), so backward
    reaches every parameter that shaped an output."""
    loss = getattr(out, "loss", None)
    if loss is not None:
        return loss
    return sum(t.float().pow(2).sum() for _, t in tensors(out) if t.is_floating_point())


def compare(cpu, tpu):
    """{ratio, max_abs, max_rel} of `tpu` against `cpu` (or {ratio, why} when
    they cannot be compared elementwise). `ratio` is the worst element's
    error over its allowed error (atol + rtol * |cpu|): above 1 fails, and it
    ranks tensors. NaN matches NaN, an infinity the same infinity."""
    tpu, cpu = tpu.detach().cpu(), cpu.detach()
    if tpu.shape != cpu.shape or tpu.dtype != cpu.dtype:
        return {"ratio": float("inf"), "why": f"cpu {cpu.dtype}{list(cpu.shape)} vs "
                                              f"tpu {tpu.dtype}{list(tpu.shape)}"}
    if not cpu.is_floating_point():
        differ = int((cpu != tpu).sum())
        return {"ratio": float("inf") if differ else 0.0, "why": f"{differ} elements differ"}
    if cpu.numel() == 0:
        return {"ratio": 0.0, "max_abs": 0.0, "max_rel": 0.0}
    a, b = tpu.double(), cpu.double()
    same = (a == b) | (a.isnan() & b.isnan())
    diff = (a - b).abs()
    diff = torch.where(same, 0.0, torch.where(diff.isnan(), float("inf"), diff))
    allowed = ATOL + RTOL * torch.where(b.isfinite(), b.abs(), 0.0)
    inf = float("inf")
    # Relative to |cpu|, floored at atol so that values near 0 do not dominate.
    rel = torch.where(same, 0.0, diff / b.abs().clamp_min(ATOL)).nan_to_num(nan=inf, posinf=inf)
    return {"ratio": (diff / allowed).max().item(), "max_abs": diff.max().item(),
            "max_rel": rel.max().item()}


def grads(model):
    # remove_duplicate=False: a tied weight is listed under both of its names,
    # so a tie that came apart on one device shows as two differing grads.
    return {n: p.grad for n, p in model.named_parameters(remove_duplicate=False)
            if p.requires_grad}


def raised_at(exc):
    """file:line of the innermost frame outside torch, to say which model code
    raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    for f in reversed(frames):
        if "/torch/" not in f.filename:
            return f"{os.path.basename(f.filename)}:{f.lineno}"
    return ""


def first_line(exc):
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else ""


def describe(exc):
    loc = raised_at(exc)
    return f"{type(exc).__name__}: {first_line(exc)}" + (f" (at {loc})" if loc else "")


def short_traceback(exc):
    return "".join(traceback.format_exception(exc))[-3000:]


def classify_exception(exc):
    """A tpu-side exception as {status, op?, detail}."""
    m = MISSING_OP.search(str(exc))
    if isinstance(exc, NotImplementedError) and m:
        return {"status": "missing_op", "op": m.group(1), "detail": m.group(1)}
    return {"status": "error", "detail": describe(exc), "traceback": short_traceback(exc)}


def cpu_failure(exc):
    return {"status": "cpu_error", "detail": describe(exc), "traceback": short_traceback(exc)}


def forward_backward(model, inputs):
    out = model(**inputs)
    scalar_loss(out).backward()
    return out


def values(model, out):
    """name -> tensor for every output and every parameter gradient (None
    when a parameter got none)."""
    vals = dict(tensors(out))
    vals.update((f"grad:{n}", g) for n, g in grads(model).items())
    return vals


def fwd_bwd_phase(spec, attn):
    # The CPU runs first: when it fails, the model is the problem, not tpu.
    try:
        cpu_model, cfg = build_model(spec, attn)
        tpu_model = copy.deepcopy(cpu_model)
        inputs = spec.inputs(cfg, torch.Generator().manual_seed(0))
        cpu_out = forward_backward(cpu_model, inputs)
    except Exception as exc:  # noqa: BLE001 - any failure of the reference is reported
        return cpu_failure(exc)
    info = {"n_params": sum(p.numel() for p in cpu_model.parameters()),
            "attn": getattr(cfg, "_attn_implementation", None)}
    try:
        tpu_model.to("tpu")
        tpu_out = forward_backward(tpu_model, to_device(inputs, "tpu"))
    except Exception as exc:  # noqa: BLE001
        return {**info, **classify_exception(exc)}

    cpu_vals, tpu_vals = values(cpu_model, cpu_out), values(tpu_model, tpu_out)
    checks = []
    for name in sorted(set(cpu_vals) | set(tpu_vals)):
        a, b = cpu_vals.get(name), tpu_vals.get(name)
        if a is None and b is None:
            continue
        if a is None or b is None:
            checks.append((name, {"ratio": float("inf"),
                                  "why": f"none on {'tpu' if b is None else 'cpu'}"}))
        else:
            checks.append((name, compare(a, b)))
    result = {**info, **summarize_checks(checks)}
    broken = broken_ties(cpu_model, tpu_model)
    if broken:
        result["broken_ties"] = broken
    if result["status"] == "mismatch":
        if broken:
            result["detail"] += ("; tied weights came apart on .to('tpu'): "
                                 + ", ".join(" = ".join(g) for g in broken))
        result["float64"] = float64_errors(spec, attn, inputs, cpu_vals, tpu_vals,
                                           result["failing"])
        worst = result["float64"].get(result["worst"]["tensor"])
        if worst:
            result["detail"] += (f"; vs float64: cpu err {worst['cpu']:.3g}, "
                                 f"tpu err {worst['tpu']:.3g}")
        # tpu no further from the exact values than the CPU (within
        # FLOAT64_SLACK), on every failing tensor: the two differ by float32
        # rounding, which the tolerance does not cover for ill-conditioned
        # sums. As the fuzzer does, the float64 run is then the reference,
        # and tpu passes it: "pass*".
        errs = [result["float64"].get(n) for n in result["failing"]]
        if all(e and e["tpu"] <= FLOAT64_SLACK * e["cpu"] for e in errs):
            result["status"], result["judged_by"] = "pass", "float64"
    return result


def broken_ties(cpu_model, tpu_model):
    """Groups of parameter names that share one parameter on the CPU but not
    on tpu: the model ties them (embeddings and LM head), the move split them,
    and their gradients no longer add up."""
    groups = collections.defaultdict(list)
    for name, p in cpu_model.named_parameters(remove_duplicate=False):
        groups[id(p)].append(name)
    tpu_params = dict(tpu_model.named_parameters(remove_duplicate=False))
    return [names for names in groups.values()
            if len(names) > 1 and len({id(tpu_params.get(n)) for n in names}) > 1]


def float64_errors(spec, attn, inputs, cpu_vals, tpu_vals, names):
    """For each failing tensor, the max abs error of the CPU's and of tpu's
    float32 value against a float64 CPU run: errors of the same size mean
    float32 rounding (a reduction order), a much larger tpu error a bug."""
    try:
        model, _ = build_model(spec, attn)
        model.double()
        as64 = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in inputs.items()}
        ref = values(model, forward_backward(model, as64))
    except Exception:  # noqa: BLE001 - some models force float32 somewhere; no annotation
        return {}
    errors = {}
    for name in names:
        r, a, b = ref.get(name), cpu_vals.get(name), tpu_vals.get(name)
        if r is None or a is None or b is None or a.shape != r.shape or b.shape != r.shape:
            continue
        r = r.detach().double()
        errors[name] = {"cpu": (a.detach().double() - r).abs().max().item(),
                        "tpu": (b.detach().cpu().double() - r).abs().max().item()}
    return errors


def summarize_checks(checks):
    failing = [(n, c) for n, c in checks if c["ratio"] > 1]
    worst_name, worst = max(checks, key=lambda nc: nc[1]["ratio"], default=("", {"ratio": 0.0}))
    summary = {"compared": len(checks), "worst": {"tensor": worst_name, **worst}}
    if not failing:
        return {"status": "pass", "detail": "", **summary}
    detail = f"{worst_name}: " + (worst.get("why") or
                                  f"max abs {worst['max_abs']:.3g}, max rel {worst['max_rel']:.3g}")
    if len(failing) > 1:
        detail += f" (+{len(failing) - 1} more of {len(checks)})"
    return {"status": "mismatch", "detail": detail, "failing": [n for n, _ in failing],
            **summary}


def generate_inputs(cfg, gen):
    # Row 1 is left-padded, as batched prompts are for generation.
    ids = _ids(gen, BATCH, SEQ - 2, cfg.vocab_size)
    mask = torch.ones_like(ids)
    ids[1, :2], mask[1, :2] = PAD, 0
    return {"input_ids": ids, "attention_mask": mask}


def generate_phase(spec):
    kwargs = dict(max_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=PAD,
                  return_dict_in_generate=True, output_scores=True)
    try:
        cpu_model, cfg = build_model(spec, None)
        tpu_model = copy.deepcopy(cpu_model)
        inputs = generate_inputs(cfg, torch.Generator().manual_seed(0))
        cpu_out = cpu_model.generate(**inputs, **kwargs)
    except Exception as exc:  # noqa: BLE001
        return cpu_failure(exc)
    try:
        tpu_model.to("tpu")
        tpu_seq = tpu_model.generate(**to_device(inputs, "tpu"), **kwargs).sequences.cpu()
    except Exception as exc:  # noqa: BLE001
        return classify_exception(exc)
    cpu_seq = cpu_out.sequences
    if cpu_seq.shape == tpu_seq.shape and torch.equal(cpu_seq, tpu_seq):
        return {"status": "pass", "detail": "", "tokens": cpu_seq.tolist()}
    return {"status": "mismatch", "detail": token_difference(cpu_out, tpu_seq),
            "tokens": cpu_seq.tolist(), "tpu_tokens": tpu_seq.tolist()}


def token_difference(cpu_out, tpu_seq):
    """Where the tokens first differ and the CPU's margin there between its
    best and second-best logit: a tiny margin means a near tie that float
    rounding may break either way, a large one a real difference."""
    cpu_seq = cpu_out.sequences
    if cpu_seq.shape != tpu_seq.shape:
        return f"cpu tokens {list(cpu_seq.shape)} vs tpu {list(tpu_seq.shape)}"
    row, col = (cpu_seq != tpu_seq).nonzero()[0].tolist()
    step = col - (cpu_seq.shape[1] - len(cpu_out.scores))
    top2 = cpu_out.scores[step][row].float().topk(2).values
    return (f"row {row} new token {step}: cpu {cpu_seq[row, col].item()} tpu "
            f"{tpu_seq[row, col].item()} (cpu top-2 logit margin {(top2[0] - top2[1]).item():.3g})")


def planned_phases(spec, attn_modes):
    phases = []
    if "default" in attn_modes:
        phases.append("fwd_bwd")
    if "eager" in attn_modes:
        phases.append("fwd_bwd_eager")
    if spec.generate:
        phases.append("generate")
    return phases


def default_is_eager(spec):
    _, cfg = build_model(spec, None)
    return getattr(cfg, "_attn_implementation", None) == "eager"


def run_phase(spec, phase):
    if phase == "fwd_bwd":
        return fwd_bwd_phase(spec, None)
    if phase == "fwd_bwd_eager":
        if spec.build is not None:
            return {"status": "n/a", "detail": "not a Transformers model"}
        if default_is_eager(spec):
            return {"status": "n/a", "detail": "the default attention is eager"}
        return fwd_bwd_phase(spec, "eager")
    if phase == "generate":
        return generate_phase(spec)
    raise ValueError(phase)


def with_fallbacks(result, ops):
    """With TORCH_TPU_CPU_FALLBACK=1 a phase runs to the end: it is still
    missing_op when an operator ran on the CPU, now with all of them named,
    and `values` says whether everything else matched."""
    if not ops or result["status"] not in ("pass", "mismatch"):
        return result
    values = result["status"] + (f": {result['detail']}" if result["detail"] else "")
    return {**result, "status": "missing_op", "values": result["status"], "op": ops[0],
            "ops": ops, "detail": f"{', '.join(ops)} (ran on the CPU; values {values})"}


def child_main(args):
    import warnings

    import torch_tpu  # noqa: F401 - registers the tpu device (if autoload is off)

    warnings.filterwarnings("ignore")
    report = Reporter(args.result)
    spec = load_spec(args.child, args.hook)
    for phase in args.phases.split(","):
        report(event="begin", phase=phase)
        start = time.perf_counter()
        before = torch_tpu.debug.fallback_ops()
        try:
            result = run_phase(spec, phase)
        except Exception as exc:  # noqa: BLE001 - a bug of this tool, reported as such
            result = {"status": "error", "detail": f"model_zoo: {describe(exc)}",
                      "traceback": short_traceback(exc)}
        after = torch_tpu.debug.fallback_ops()
        result = with_fallbacks(result, sorted(op for op in after
                                               if after[op] > before.get(op, 0)))
        result["time_s"] = round(time.perf_counter() - start, 2)
        report(event="result", phase=phase, **result)
    return 0


# ---------------------------------------------------------------------------
# Parent side.

def load_spec(name, hook=None):
    """A named Spec, or the Spec returned by `hook` ("path/to/file.py:function",
    called with this module): tests inject tiny models that way."""
    if hook is None:
        return BY_NAME[name]
    path, func = hook.rsplit(":", 1)
    module_spec = importlib.util.spec_from_file_location("model_zoo_hook", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return getattr(module, func)(sys.modules[__name__])


def _signal_name(returncode):
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def run_child(name, phases, timeout, hook=None, fallback=False):
    """Runs `phases` of one model in a child; returns (events, returncode or
    None on timeout, stderr tail)."""
    fd, result_path = tempfile.mkstemp(prefix="model_zoo_", suffix=".jsonl")
    os.close(fd)
    argv = [sys.executable, os.path.abspath(__file__), "--child", name, "--result", result_path,
            "--phases", ",".join(phases)]
    if hook:
        argv += ["--hook", hook]
    child_env = dict(os.environ)
    if fallback:
        child_env["TORCH_TPU_CPU_FALLBACK"] = "1"
    child_env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    child_env.setdefault("TOKENIZERS_PARALLELISM", "false")
    with tempfile.TemporaryFile(mode="w+") as err:
        # Its own session, so a timeout kills the child and anything it started.
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=child_env,
                                start_new_session=True)
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            returncode = None
        err.seek(0)
        stderr_tail = err.read()[-4000:]
    with open(result_path) as f:
        events = [json.loads(line) for line in f if line.strip()]
    os.unlink(result_path)
    return events, returncode, stderr_tail


def _last_stderr_line(tail):
    lines = [ln for ln in tail.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def run_model(name, timeout=DEFAULT_TIMEOUT, attn_modes=("default", "eager"), hook=None,
              fallback=False):
    """Every phase of one model, as a row dict. A crash or a timeout fails the
    phase it happened in; the phases after it run in a fresh child, with
    what is left of the timeout."""
    spec = load_spec(name, hook)
    row = {"name": spec.name, "model_type": spec.model_type, "family": spec.family,
           "head": spec.head, "phases": {}}
    todo = planned_phases(spec, attn_modes)
    start = time.monotonic()
    while todo:
        left = timeout - (time.monotonic() - start)
        if left <= 0:
            for phase in todo:
                row["phases"][phase] = {"status": "not_run", "detail": "no time left"}
            break
        events, returncode, stderr_tail = run_child(name, todo, left, hook, fallback)
        begun = None
        for ev in events:
            if ev["event"] == "begin":
                begun = ev["phase"]
            else:
                row["phases"][ev["phase"]] = {k: v for k, v in ev.items() if k != "event"}
                begun = None
        todo = [p for p in todo if p not in row["phases"]]
        if not todo:
            break
        failed = begun or todo[0]
        if returncode is None:
            status, detail = "timeout", f"killed at the model's {timeout:g} s limit"
        else:
            status = "crash"
            how = (f"killed by {_signal_name(returncode)}" if returncode < 0
                   else f"exit status {returncode}")
            detail = f"{how}: {_last_stderr_line(stderr_tail)}"
        row["phases"][failed] = {"status": status, "detail": detail, "stderr": stderr_tail}
        todo.remove(failed)
        if status == "timeout":
            for phase in todo:
                row["phases"][phase] = {"status": "not_run", "detail": "after a timeout"}
            break
    row["time_s"] = round(time.monotonic() - start, 1)
    fwd = row["phases"].get("fwd_bwd") or next(iter(row["phases"].values()), {})
    row["n_params"] = fwd.get("n_params")
    row["phases"] = {p: row["phases"][p] for p in planned_phases(spec, attn_modes)
                     if p in row["phases"]}
    return row


def summarize(rows):
    """Pass rates per phase (cpu_error and n/a left out), status
    counts, and how many phases stopped on each missing operator."""
    def rate(phase):
        counted = [r["phases"][phase]["status"] for r in rows if phase in r["phases"]]
        counted = [s for s in counted if s not in ("cpu_error", "n/a")]
        return {"pass": counted.count("pass"), "of": len(counted)}

    phases = [p for r in rows for p in r["phases"].values()]
    missing = collections.Counter()
    for p in phases:
        if p["status"] == "missing_op":
            missing.update(p.get("ops") or [p["op"]])
    return {"fwd_bwd": rate("fwd_bwd"), "fwd_bwd_eager": rate("fwd_bwd_eager"),
            "generate": rate("generate"), "missing_ops": dict(missing.most_common()),
            "statuses": dict(collections.Counter(p["status"] for p in phases)),
            "float64_judged": sum(p.get("judged_by") == "float64" for p in phases),
            "tie_mismatches": sum(p["status"] == "mismatch" and bool(p.get("broken_ties"))
                                  for p in phases),
            "models": len(rows)}


PHASE_COLUMNS = [("fwd_bwd", "fwd+bwd"), ("fwd_bwd_eager", "eager"), ("generate", "generate")]


def format_report(rows, summary):
    lines = [f"{'model':<22} {'family':<16} {'params':>8}  "
             + "  ".join(f"{title:<11}" for _, title in PHASE_COLUMNS) + "  time"]
    def cell(p):
        return p.get("status", "-") + ("*" if p.get("judged_by") == "float64" else "")

    for r in rows:
        cells = [cell(r["phases"].get(p, {})) for p, _ in PHASE_COLUMNS]
        params = f"{r['n_params'] / 1000:.1f}k" if r.get("n_params") else "-"
        lines.append(f"{r['name']:<22} {r['family']:<16} {params:>8}  "
                     + "  ".join(f"{c:<11}" for c in cells) + f"  {r.get('time_s', 0):.1f}s")
    details = [f"  {r['name']} {phase}: {cell(p)}: {p['detail']}"
               for r in rows for phase, p in r["phases"].items()
               if p["status"] not in ("pass", "n/a")]
    if details:
        lines += ["", "Not passing:"] + details
    judged = [f"  {r['name']} {phase}: {p['detail']}"
              for r in rows for phase, p in r["phases"].items() if p.get("judged_by")]
    if judged:
        lines += ["", "pass* (judged by a float64 run):"] + judged

    def pct(d):
        return f"{d['pass']}/{d['of']} ({100 * d['pass'] / d['of']:.0f}%)" if d["of"] else "-"

    lines += ["", f"fwd+bwd pass rate (default attention): {pct(summary['fwd_bwd'])}",
              f"fwd+bwd pass rate (eager attention):   {pct(summary['fwd_bwd_eager'])}",
              f"generate pass rate (decoders):         {pct(summary['generate'])}",
              "(cpu_error and n/a are left out of the rates)"]
    if summary["tie_mismatches"]:
        lines.append(f"mismatches with tied weights split by .to('tpu'): "
                     f"{summary['tie_mismatches']} of {summary['statuses'].get('mismatch', 0)}")
    if summary["float64_judged"]:
        lines.append(f"pass* ({summary['float64_judged']}): outside the CPU's tolerance, but on "
                     f"every differing tensor tpu's error against a float64 run is at most "
                     f"{FLOAT64_SLACK}x the CPU's: float32 rounding; counted as passes")
    if summary["missing_ops"]:
        lines.append("Missing ops (number of phases that hit each):")
        lines += [f"  {n:>3}  {op}" for op, n in summary["missing_ops"].items()]
    return "\n".join(lines)


def run_models(names, timeout=DEFAULT_TIMEOUT, attn_modes=("default", "eager"), jobs=1,
               fallback=False, log=None):
    rows = [None] * len(names)

    def one(i):
        rows[i] = run_model(names[i], timeout, attn_modes, fallback=fallback)
        if log:
            r = rows[i]
            log(f"{r['name']:<22} " + " ".join(f"{p}={v['status']}" for p, v in r["phases"].items())
                + f"  ({r['time_s']:.1f}s)")

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, range(len(names))))
    return rows


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated names (see --list)")
    p.add_argument("--subset", choices=["ci"], help="a fixed subset: ci")
    p.add_argument("--list", action="store_true", help="list the architectures and exit")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="seconds per model (default %(default)s)")
    p.add_argument("--attn", default="default,eager",
                   help="attention implementations to check: default, eager or both")
    p.add_argument("--jobs", type=int, default=1, help="models run at once (default 1)")
    p.add_argument("--fallback", action="store_true",
                   help="run with TORCH_TPU_CPU_FALLBACK=1: name every missing operator of a "
                        "model, and check the values around them")
    p.add_argument("--json", help="write every result to this file")
    # Child mode (internal).
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--phases", help=argparse.SUPPRESS)
    p.add_argument("--hook", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    if args.list:
        for s in SPECS:
            print(f"{s.name:<22} {s.family:<16} {s.model_type:<20} {s.head}")
        print(f"\n{len(SPECS)} architectures. Left out:")
        for what, why in LEFT_OUT.items():
            print(f"  {what}: {why}")
        return 0
    names = [s.name for s in SPECS]
    if args.subset == "ci":
        names = list(CI_SUBSET)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        print(f"unknown: {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    attn_modes = tuple(a.strip() for a in args.attn.split(","))
    start = time.monotonic()
    rows = run_models(names, args.timeout, attn_modes, args.jobs, args.fallback,
                      log=lambda s: print(s, file=sys.stderr, flush=True))
    summary = summarize(rows)
    summary["wall_s"] = round(time.monotonic() - start, 1)
    print(format_report(rows, summary))
    print(f"\n{len(rows)} models in {summary['wall_s']:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "models": rows,
                       "tolerance": {"rtol": RTOL, "atol": ATOL}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
