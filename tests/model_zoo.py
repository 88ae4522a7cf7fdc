"""Small versions of the models users bring: a CNN (conv, BatchNorm, pooling)
and a GPT-style decoder (embedding, causal SDPA, LayerNorm, GELU, dropout).
Shared by tests/test_models.py and benchmarks/train_step.py."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class CNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        # No conv bias before BatchNorm (as in ResNets): BN cancels it, so its
        # gradient is rounding noise that Adam would amplify into arbitrary
        # updates, different on every backend.
        self.c1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2, bias=False)
        self.b2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.avg_pool2d(F.relu(self.b2(self.c2(x))), 2)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class SharedMaskDropout(nn.Module):
    """Dropout whose masks come from one CPU generator, so a CPU run and a tpu
    run drop the same units (the tpu generator is a different stream from
    CPU's, so nn.Dropout cannot match CPU step by step)."""

    def __init__(self, p, seed):
        super().__init__()
        self.p = p
        self.gen = torch.Generator().manual_seed(seed)

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = torch.rand(x.shape, generator=self.gen) >= self.p
        return x * keep.to(x.device) / (1 - self.p)


def make_dropout(p, shared_seed):
    return nn.Dropout(p) if shared_seed is None else SharedMaskDropout(p, shared_seed)


class Block(nn.Module):
    def __init__(self, d, heads, p, shared_seed):
        super().__init__()
        self.heads, self.p = heads, p
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        seed = None if shared_seed is None else shared_seed + 1
        self.drop1, self.drop2 = make_dropout(p, shared_seed), make_dropout(p, seed)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop1(self.proj(y.transpose(1, 2).reshape(B, T, C)))
        return x + self.drop2(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


class GPT(nn.Module):
    def __init__(self, vocab=64, ctx=16, d=32, heads=4, layers=2, p=0.1, shared_seed=None):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.drop = make_dropout(p, None if shared_seed is None else shared_seed + 100)
        self.blocks = nn.ModuleList(
            Block(d, heads, p, None if shared_seed is None else shared_seed + 10 * i)
            for i in range(layers)
        )
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def gpt_loss(model, idx):
    """Next-token cross-entropy (predict idx[:, 1:] from idx[:, :-1])."""
    logits = model(idx[:, :-1])
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))


def gpt_train_step(model, opt, idx, max_norm=1.0):
    """One training step: next-token loss, backward, gradient clipping to
    `max_norm`, an optimizer step. Returns the loss (not read back)."""
    opt.zero_grad()
    loss = gpt_loss(model, idx)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    opt.step()
    return loss
