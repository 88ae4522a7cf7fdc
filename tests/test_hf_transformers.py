"""Transformers models on tpu as users load and run them: a tiny Llama with
its embedding tied to the LM head, built offline from a config. The tie
survives .to("tpu") and from_pretrained(device_map=...), training gradients
match CPU (the tied weight gets both uses' gradient), and greedy generate()
gives CPU's tokens."""

import copy
import warnings

import pytest
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

import torch_tpu  # noqa: F401

DEV = "tpu"


def tiny_llama():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      pad_token_id=0, eos_token_id=1, bos_token_id=2)
    return LlamaForCausalLM(cfg).eval()


IDS = torch.randint(3, 128, (2, 6), generator=torch.Generator().manual_seed(1))


def tied(m):
    return m.lm_head.weight is m.model.embed_tokens.weight


def test_to_tpu_keeps_the_tie_and_trains_like_cpu():
    cpu = tiny_llama()
    tpu = copy.deepcopy(cpu).to(DEV)
    assert tied(cpu) and tied(tpu)
    for m, dev in ((cpu, "cpu"), (tpu, DEV)):
        m(input_ids=IDS.to(dev), labels=IDS.to(dev)).loss.backward()
    grads = dict(tpu.named_parameters())
    for name, p in cpu.named_parameters():
        torch.testing.assert_close(grads[name].grad.cpu(), p.grad, rtol=1e-4, atol=1e-5,
                                   msg=lambda m, n=name: f"{n}: {m}")


def test_greedy_generate_matches_cpu():
    cpu = tiny_llama()
    tpu = copy.deepcopy(cpu).to(DEV)
    want = cpu.generate(IDS, max_new_tokens=6, do_sample=False)
    got = tpu.generate(IDS.to(DEV), max_new_tokens=6, do_sample=False)
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("device_map", ["tpu", "auto"])
def test_from_pretrained_device_map_places_the_model_on_tpu(tmp_path, device_map):
    tiny_llama().save_pretrained(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = AutoModelForCausalLM.from_pretrained(tmp_path, device_map=device_map)
    assert {p.device.type for p in m.parameters()} == {DEV}
    assert tied(m)


def spilling_llama(path):
    """A tied Llama of about 1.2 MB, saved: larger than the tpu budgets below."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      pad_token_id=0, eos_token_id=1, bos_token_id=2)
    model = LlamaForCausalLM(cfg).eval()
    model.save_pretrained(path)
    return model


SPILL_IDS = torch.randint(3, 256, (2, 6), generator=torch.Generator().manual_seed(2))


def test_device_map_auto_spills_to_cpu_past_max_memory(tmp_path, caplog):
    # As on CUDA: what does not fit the accelerator's budget goes to the CPU,
    # accelerate says so, and the split model gives the CPU's tokens.
    cpu = spilling_llama(tmp_path)
    with caplog.at_level("WARNING"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = AutoModelForCausalLM.from_pretrained(tmp_path, device_map="auto",
                                                 max_memory={0: "400KB", "cpu": "1GB"})
    placed = set(m.hf_device_map.values())
    assert placed == {0, "cpu"}, m.hf_device_map
    assert {p.device.type for p in m.parameters()} >= {DEV}
    assert "offloaded to the cpu" in caplog.text
    want = cpu.generate(SPILL_IDS, max_new_tokens=4, do_sample=False)
    got = m.generate(SPILL_IDS.to(DEV), max_new_tokens=4, do_sample=False)
    assert torch.equal(got.cpu(), want)


SPILL_CHILD = """
import sys, warnings, torch, torch_tpu
from transformers import AutoModelForCausalLM
warnings.simplefilter("ignore")
total = torch.tpu.get_device_properties(0).total_memory
m = AutoModelForCausalLM.from_pretrained(sys.argv[1], device_map="auto")
ids = torch.load(sys.argv[2])
out = m.generate(ids.to("tpu"), max_new_tokens=4, do_sample=False).cpu()
torch.save({"total": total, "map": {k: str(v) for k, v in m.hf_device_map.items()},
            "tokens": out}, sys.argv[3])
"""


def test_device_map_auto_spills_a_model_larger_than_tpu_memory(tmp_path):
    # The reported tpu memory (capped here by TORCH_TPU_MEMORY_LIMIT_BYTES,
    # read at start-up, hence a child process) is smaller than the model.
    import os
    import subprocess
    import sys

    cpu = spilling_llama(tmp_path / "model")
    torch.save(SPILL_IDS, tmp_path / "ids.pt")
    env = dict(os.environ, TORCH_TPU_MEMORY_LIMIT_BYTES=str(400_000))
    proc = subprocess.run([sys.executable, "-c", SPILL_CHILD, str(tmp_path / "model"),
                           str(tmp_path / "ids.pt"), str(tmp_path / "out.pt")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "offloaded to the cpu" in proc.stderr
    out = torch.load(tmp_path / "out.pt")
    assert out["total"] == 400_000
    assert set(out["map"].values()) == {"0", "cpu"}, out["map"]
    assert torch.equal(out["tokens"], cpu.generate(SPILL_IDS, max_new_tokens=4, do_sample=False))


def test_beam_search_and_static_cache_match_cpu():
    cpu = tiny_llama()
    tpu = copy.deepcopy(cpu).to(DEV)
    # The static cache compiles the decoding step with torch.compile's
    # backend "tpu" (Transformers' default), or runs it eagerly.
    replays = torch_tpu.debug.metrics()["graph_replays"]
    for kw in (dict(num_beams=3), dict(cache_implementation="static"),
               dict(cache_implementation="static", disable_compile=True)):
        want = cpu.generate(IDS, max_new_tokens=5, do_sample=False, **kw)
        got = tpu.generate(IDS.to(DEV), max_new_tokens=5, do_sample=False, **kw)
        assert torch.equal(got.cpu(), want), kw
    # the compiled decoding step was recorded once and replayed per token
    assert torch_tpu.debug.metrics()["graph_replays"] - replays >= 3


def test_sampling_repeats_for_the_same_seed():
    tpu = tiny_llama().to(DEV)
    runs = []
    for _ in range(2):
        torch.manual_seed(5)
        runs.append(tpu.generate(IDS.to(DEV), max_new_tokens=4, do_sample=True, top_k=20).cpu())
    assert torch.equal(runs[0], runs[1])
    assert runs[0].shape == (2, 10)
