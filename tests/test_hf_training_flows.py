"""Hugging Face training as users run it, on tpu: the Trainer (training
with evaluation, compute_metrics, prediction, checkpoints and resuming, and
with `torch_compile=True`) and an Accelerate loop with bf16 mixed
precision. A tiny Llama built offline from a config; each flow is compared
with the same flow on the CPU."""

import os
import shutil

import numpy as np
import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

import torch_tpu  # noqa: F401
from torch_tpu import debug


def tiny_llama():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, pad_token_id=0,
                      eos_token_id=1, bos_token_id=2)
    return LlamaForCausalLM(cfg)


class Sequences(torch.utils.data.Dataset):
    def __init__(self, n, seed=0):
        self.n, self.seed = n, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(3, 128, (8,), generator=torch.Generator().manual_seed(self.seed + i))
        return {"input_ids": ids, "labels": ids}


def next_token_accuracy(prediction):
    logits, labels = prediction.predictions, prediction.label_ids
    return {"acc": float((logits.argmax(-1)[:, :-1] == labels[:, 1:]).mean())}


def train(out, resume=None, **kwargs):
    """Trains 8 steps (evaluating and saving every 4, keeping the best
    model), then evaluates and predicts; returns what a user looks at."""
    args = TrainingArguments(
        output_dir=str(out), per_device_train_batch_size=4, per_device_eval_batch_size=3,
        max_steps=8, logging_steps=1, save_strategy="steps", save_steps=4,
        eval_strategy="steps", eval_steps=4, load_best_model_at_end=True,
        metric_for_best_model="eval_loss", report_to=[], disable_tqdm=True, **kwargs)
    trainer = Trainer(model=tiny_llama(), args=args, train_dataset=Sequences(16),
                      eval_dataset=Sequences(7, seed=100), compute_metrics=next_token_accuracy)
    trainer.train(resume_from_checkpoint=resume)
    device = next(trainer.model.parameters()).device.type
    return {
        "device": (trainer.args.device.type, device),
        "losses": [h["loss"] for h in trainer.state.log_history if "loss" in h],
        "eval": trainer.evaluate(),
        "predictions": trainer.predict(Sequences(5, seed=200)).predictions,
        "checkpoints": sorted(os.listdir(out)),
        "weights": {k: v.detach().cpu() for k, v in trainer.model.state_dict().items()},
    }


def assert_same_run(got, want):
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    for key in ("eval_loss", "eval_acc"):
        np.testing.assert_allclose(got["eval"][key], want["eval"][key], rtol=1e-5)
    np.testing.assert_allclose(got["predictions"], want["predictions"], rtol=1e-4, atol=1e-5)
    assert got["checkpoints"] == want["checkpoints"] == ["checkpoint-4", "checkpoint-8"]
    for name, w in want["weights"].items():
        torch.testing.assert_close(got["weights"][name], w, rtol=1e-4, atol=1e-6)


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """The reference: the same Trainer run on the CPU (once for the file)."""
    cpu = train(tmp_path_factory.mktemp("cpu"), use_cpu=True)
    assert cpu["device"] == ("cpu", "cpu")
    return cpu


def test_trainer_trains_evaluates_checkpoints_and_resumes_like_cpu(tmp_path, cpu_run):
    cpu = cpu_run
    tpu = train(tmp_path / "tpu")  # no device argument: the Trainer finds tpu
    assert tpu["device"] == ("tpu", "tpu")
    assert_same_run(tpu, cpu)
    # A run stopped after its first checkpoint and resumed from it (model,
    # optimizer, scheduler and RNG states saved from tpu) ends where the
    # uninterrupted one did.
    shutil.rmtree(tmp_path / "tpu" / "checkpoint-8")
    resumed = train(tmp_path / "tpu", resume=str(tmp_path / "tpu" / "checkpoint-4"))
    assert_same_run(resumed, cpu)


def test_trainer_with_torch_compile_trains_through_tpu_graphs(tmp_path, cpu_run):
    # `torch_compile=True` asks for the default backend, which hands graphs
    # of tpu tensors to the tpu backend.
    before = debug.metrics()["graph_replays"]
    try:
        compiled = train(tmp_path / "compiled", torch_compile=True)
    finally:
        torch._dynamo.reset()
    assert compiled["device"] == ("tpu", "tpu")
    assert debug.metrics()["graph_replays"] > before
    assert_same_run(compiled, cpu_run)


@pytest.fixture
def fresh_accelerate_state():
    # Accelerate keeps one state per process (the Trainer made one too).
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state(True)
    yield
    AcceleratorState._reset_state(True)


def test_accelerate_loop_with_bf16_mixed_precision_on_tpu(fresh_accelerate_state):
    from accelerate import Accelerator

    def loop(accelerator):
        model = tiny_llama()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        data = torch.utils.data.DataLoader(Sequences(16), batch_size=4)
        model, opt, data = accelerator.prepare(model, opt, data)
        dtypes = set()
        hook = model.model.layers[0].mlp.up_proj.register_forward_hook(
            lambda mod, args, out: dtypes.add(out.dtype))
        losses = []
        for batch in data:
            assert batch["input_ids"].device.type == accelerator.device.type
            loss = model(**batch).loss
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        hook.remove()
        return losses, dtypes, next(model.parameters())

    accelerator = Accelerator(mixed_precision="bf16")  # no device argument
    assert accelerator.device.type == "tpu"
    losses, dtypes, param = loop(accelerator)
    # autocast ran the matmuls in bf16; the parameters stay float32 on tpu
    assert dtypes == {torch.bfloat16}
    assert param.device.type == "tpu" and param.dtype == torch.float32

    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state(True)
    cpu_losses, cpu_dtypes, _ = loop(Accelerator(cpu=True, mixed_precision="bf16"))
    assert cpu_dtypes == {torch.bfloat16}
    np.testing.assert_allclose(losses, cpu_losses, rtol=2e-3)
