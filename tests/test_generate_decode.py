"""Transformers' greedy `generate()` on tpu, dynamic and static KV cache
(issue 27): tokens equal CPU's, and a process whose persistent cache is warm
compiles nothing while decoding tokens 2..N (it loads every program from
disk). Each run is its own process, as a user's second run is. Under
DeferAndFuse a decoding step is a few regions, of which only those of the
growing ops are new programs each token."""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, sys
import torch
import torch_tpu
from torch_tpu import debug
from transformers import LlamaConfig, LlamaForCausalLM, StoppingCriteria, StoppingCriteriaList

cache = sys.argv[1]
layers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
torch.manual_seed(0)
cfg = LlamaConfig(num_hidden_layers=layers, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                  intermediate_size=64, vocab_size=300, max_position_embeddings=128,
                  bos_token_id=0, eos_token_id=299, pad_token_id=0)
model = LlamaForCausalLM(cfg).eval()
ids = torch.randint(1, 299, (2, 7))


class Counter(StoppingCriteria):
    # generate calls it after each new token: read the compile counter there
    def __init__(self):
        self.compiles, self.executions, self.region_hits = [], [], []

    def __call__(self, input_ids, scores, **kwargs):
        m = debug.metrics()
        self.compiles.append(m["compiles"])
        self.executions.append(m["executions"])
        self.region_hits.append(m["region_cache_hits"])
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


kw = dict(max_new_tokens=12, min_new_tokens=12, do_sample=False)
if cache == "static":
    kw["cache_implementation"] = "static"
with torch.no_grad():
    want = model.generate(ids, **kw)
    model.to("tpu")
    counter = Counter()
    got = model.generate(ids.to("tpu"), stopping_criteria=StoppingCriteriaList([counter]), **kw).cpu()
print(json.dumps({"same": torch.equal(got, want), "after_first": counter.compiles[-1] - counter.compiles[0],
                  "tokens": len(counter.compiles),
                  "compiles_per_token": [b - a for a, b in zip(counter.compiles, counter.compiles[1:])],
                  "region_hits_per_token": [b - a for a, b in zip(counter.region_hits, counter.region_hits[1:])],
                  "launches_per_token": (counter.executions[-1] - counter.executions[0]) / (len(counter.executions) - 1)}))
"""


def _run(cache, cache_dir, mode="strict", layers=2):
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(cache_dir), TORCH_TPU_EAGER_MODE=mode)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, cache, str(layers)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_warm_process_decodes_without_compiling(cache, tmp_path):
    cold = _run(cache, tmp_path)
    warm = _run(cache, tmp_path)
    assert cold["same"] and warm["same"]
    assert cold["tokens"] == warm["tokens"] == 12
    # the cold process compiles while decoding (eager programs of growing
    # shapes; README says which); the warm one loads them all
    assert cold["after_first"] > 0
    assert warm["after_first"] == 0, warm


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_defer_and_fuse_decoding_replays_all_but_the_growing_ops(cache, tmp_path):
    """Strict launches ~120 programs a token here (dynamic) and ~44 (static:
    the compiled step and generate's own ops). Under DeferAndFuse a token
    is a few regions: the ops on what grows every token (the KV cache's
    cats and attention over it, generate's input_ids and the ops reading
    it) are kept in regions of their own, so every other region has the
    same shapes each token and replays its program, and the new programs
    a token needs do not grow with the model's depth (one program serves
    every layer's attention)."""
    cold = _run(cache, tmp_path / "2", "defer_and_fuse")
    deeper = _run(cache, tmp_path / "4", "defer_and_fuse", layers=4)
    assert cold["same"] and deeper["same"], (cold, deeper)
    steady = slice(2, None)  # from the third token on
    assert cold["compiles_per_token"][steady] == deeper["compiles_per_token"][steady], (cold, deeper)
    # the KV cache's program, and small ones on input_ids and the mask
    assert max(cold["compiles_per_token"][steady]) <= 6, cold
    if cache == "dynamic":
        # each layer's stable ops (projections, norms, MLP) replay every token
        assert min(cold["region_hits_per_token"][steady]) >= 2, cold
        assert (min(deeper["region_hits_per_token"][steady])
                >= min(cold["region_hits_per_token"][steady]) + 2), (cold, deeper)
    warm = _run(cache, tmp_path / "2", "defer_and_fuse")
    assert warm["same"] and warm["after_first"] == 0, warm
