"""A Hugging Face Llama (tiny config, tied embeddings) trained with DDP or
FSDP2 on tpu under torchrun, against one CPU process on the full batch.

Usage: torchrun --nproc-per-node=2 hf_llama.py {ddp,fsdp}
"""

import os
import sys

import torch
import torch.distributed as dist
from params_check import check_parameters, finish
from transformers import LlamaConfig, LlamaForCausalLM

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
STEPS = 3


def model():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      pad_token_id=0, eos_token_id=1, bos_token_id=2)
    return LlamaForCausalLM(cfg)


def batch():
    return torch.randint(3, 128, (4, 12), generator=torch.Generator().manual_seed(1))


def train(m, ids):
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    for _ in range(STEPS):
        opt.zero_grad()
        m(input_ids=ids, labels=ids).loss.backward()
        opt.step()


def main():
    how = sys.argv[1]
    ref = model()
    train(ref, batch())
    ids = batch().chunk(WORLD)[RANK].to("tpu")
    if how == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("tpu_dist")
        m = DDP(model().to("tpu"))
        inner = m.module
    else:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh("tpu", (WORLD,))
        m = model().to("tpu")
        for layer in m.model.layers:
            fully_shard(layer, mesh=mesh)
        fully_shard(m, mesh=mesh)
        inner = m
    assert inner.lm_head.weight is inner.model.embed_tokens.weight, "the tie was split"
    train(m, ids)
    check_parameters(inner.named_parameters(), dict(ref.named_parameters()), f"HF Llama {how}",
                     1e-4)
    finish()


if __name__ == "__main__":
    main()
