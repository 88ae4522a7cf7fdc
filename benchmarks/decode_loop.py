"""Greedy decoding with a static KV cache: tokens/s on tpu Strict eager next
to PyTorch CPU eager, measured side by side in one run, and the programs
compiled after the first decoded token (must be 0: every position reuses
the executables of the first).

Run: python benchmarks/decode_loop.py [--tokens 128] [--repeats 3]

The model is a small Llama-style decoder (RMSNorm, rotary embeddings,
SwiGLU, a preallocated per-layer cache written at the current position
through a view: `cache[:, :, pos] = k`), written out here so the benchmark
needs no model download. Both devices run the same weights and must produce
the same tokens. Threads: PyTorch's intra-op threads are pinned (--threads)
and printed; the XLA CPU plugin uses its own pool.
"""

import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn

import torch_tpu  # noqa: F401
from torch_tpu import debug


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, ff, bias=False)
        self.up = nn.Linear(d, ff, bias=False)
        self.down = nn.Linear(ff, d, bias=False)

    def forward(self, x, pos, cos, sin, k_cache, v_cache, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, self.hd).unbind(2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        # written at the current positions through a view of the cache
        k_cache[:, :, pos : pos + t] = k
        v_cache[:, :, pos : pos + t] = v
        att = (q @ k_cache.transpose(-1, -2)) / self.hd**0.5
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        x = x + self.out((att @ v_cache).transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyLlama(nn.Module):
    def __init__(self, vocab=512, d=128, heads=4, ff=344, layers=4, max_len=192):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.max_len, self.heads, self.hd = max_len, heads, d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        angles = torch.outer(torch.arange(max_len).float(), inv)
        self.register_buffer("cos", torch.cat((angles, angles), -1).cos(), persistent=False)
        self.register_buffer("sin", torch.cat((angles, angles), -1).sin(), persistent=False)
        self.register_buffer("positions", torch.arange(max_len), persistent=False)

    def new_cache(self, batch):
        shape = (batch, self.heads, self.max_len, self.hd)
        dev = self.cos.device
        return [(torch.zeros(shape, device=dev), torch.zeros(shape, device=dev)) for _ in self.blocks]

    def forward(self, tokens, pos, cache):
        t = tokens.shape[1]
        x = self.embed(tokens)
        cos, sin = self.cos[pos : pos + t], self.sin[pos : pos + t]
        # query i (at position pos + i) sees cache positions <= pos + i
        mask = self.positions[None, :] <= self.positions[pos : pos + t, None]
        for block, (k_cache, v_cache) in zip(self.blocks, cache):
            x = block(x, pos, cos, sin, k_cache, v_cache, mask)
        return self.head(self.norm(x[:, -1]))


@torch.no_grad()
def generate(model, prompt, tokens, on_first_token=None):
    cache = model.new_cache(prompt.shape[0])
    logits = model(prompt, 0, cache)
    out = [logits.argmax(-1, keepdim=True)]
    pos = prompt.shape[1]
    for i in range(tokens - 1):
        if i == 1 and on_first_token is not None:
            on_first_token()  # after the first decoded token's step
        logits = model(out[-1], pos, cache)
        out.append(logits.argmax(-1, keepdim=True))
        pos += 1
    return torch.cat(out, 1).cpu()


def best_time(fn, repeats):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = TinyLlama(max_len=args.prompt + args.tokens).eval()
    prompt = torch.randint(0, 512, (1, args.prompt))
    print(
        f"TinyLlama d=128 layers=4 heads=4, prompt {args.prompt}, {args.tokens} tokens greedy, "
        f"best of {args.repeats}; torch threads {torch.get_num_threads()}"
    )

    # CPU first: the XLA CPU plugin's threads spin after each program and
    # would slow PyTorch's own threads on a small machine.
    t_cpu, tokens_cpu = best_time(lambda: generate(model, prompt, args.tokens), args.repeats)

    tpu_model = model.to("tpu")
    tpu_prompt = prompt.to("tpu")
    generate(tpu_model, tpu_prompt, 3)  # compiles the prefill and one step
    marks = {}

    def mark():
        torch.tpu.synchronize()
        marks["compiles"] = debug.metrics()["compiles"]

    def run_tpu():
        result = generate(tpu_model, tpu_prompt, args.tokens, on_first_token=mark)
        marks["after"] = debug.metrics()["compiles"]
        return result

    t_tpu, tokens_tpu = best_time(run_tpu, args.repeats)
    compiles_after_first = marks["after"] - marks["compiles"]

    def row(name, t):
        print(f"{name:<22} {t * 1e3:>9.1f} ms {args.tokens / t:>9.1f} tokens/s")

    row("PyTorch CPU eager", t_cpu)
    row("tpu Strict", t_tpu)
    print(f"tpu / CPU tokens/s ratio: {t_cpu / t_tpu:.2f}")
    print(f"programs compiled after the first token: {compiles_after_first} (must be 0)")
    same = torch.equal(tokens_cpu, tokens_tpu)
    print(f"tokens identical to CPU's: {same}")
    if compiles_after_first != 0 or not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
