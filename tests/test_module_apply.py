"""model.to("tpu") keeps what CPU -> CUDA keeps: every Parameter object (so
tied weights stay one Parameter and optimizers built before the move still
hold the model's parameters), the gradients with them, and training results."""

import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401

DEV = "tpu"


class TiedLM(torch.nn.Module):
    """An embedding tied to its output head, as most language models are."""

    def __init__(self, vocab=11, dim=6):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.body = torch.nn.Linear(dim, dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.body(self.embed(ids))))


def test_shallow_copy_compatibility_is_cuda_like():
    cpu, tpu = torch.zeros(2), torch.zeros(2, device=DEV)
    assert torch._has_compatible_shallow_copy_type(cpu, tpu)
    assert torch._has_compatible_shallow_copy_type(tpu, cpu)
    assert torch._has_compatible_shallow_copy_type(tpu, tpu)
    assert not torch._has_compatible_shallow_copy_type(tpu, cpu.to_sparse())


def test_to_keeps_parameter_objects_and_ties():
    torch.manual_seed(0)
    m = TiedLM()
    before = {n: p for n, p in m.named_parameters(remove_duplicate=False)}
    assert m.to(DEV) is m
    after = dict(m.named_parameters(remove_duplicate=False))
    for name, p in after.items():
        assert p is before[name], name
        assert p.device.type == DEV and isinstance(p, torch.nn.Parameter)
    assert m.head.weight is m.embed.weight
    assert len(list(m.parameters())) == 3  # the tie counts once
    m.to("cpu")
    assert m.head.weight is m.embed.weight and m.head.weight.device.type == "cpu"


def test_to_moves_gradients_with_their_parameters():
    m = torch.nn.Linear(3, 2)
    m(torch.ones(1, 3)).sum().backward()
    grad = m.weight.grad
    expected = grad.clone()
    m.to(DEV)
    assert m.weight.grad is grad and grad.device.type == DEV
    torch.testing.assert_close(grad.cpu(), expected)


def test_optimizer_built_before_the_move_trains_the_model():
    ids = torch.tensor([[1, 4, 7, 2], [3, 3, 9, 0]])
    results = {}
    for dev in ("cpu", DEV):
        torch.manual_seed(0)
        m = TiedLM()
        opt = torch.optim.AdamW(m.parameters(), lr=0.1)  # before .to(), as many scripts do
        m.to(dev)
        for _ in range(3):
            logits = m(ids.to(dev))
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.to(dev).reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        assert m.head.weight is m.embed.weight
        results[dev] = [loss.detach().cpu()] + [p.detach().cpu() for p in m.parameters()]
    for t, c in zip(results[DEV], results["cpu"]):
        torch.testing.assert_close(t, c, rtol=1e-5, atol=1e-5)


def test_state_dict_round_trip_keeps_the_tie():
    torch.manual_seed(0)
    m = TiedLM().to(DEV)
    sd = m.state_dict()
    assert sd["head.weight"].data_ptr() == sd["embed.weight"].data_ptr()
    fresh = TiedLM().to(DEV)
    fresh.load_state_dict(sd)
    assert fresh.head.weight is fresh.embed.weight
    torch.testing.assert_close(fresh.embed.weight.cpu(), m.embed.weight.cpu())


def test_half_and_apply_in_place_on_tpu():
    m = TiedLM().to(DEV)
    p = m.embed.weight
    m.half()
    assert m.embed.weight is p and p.dtype == torch.half and m.head.weight is p
    m.to(DEV, torch.float32)
    assert m.embed.weight is p and p.dtype == torch.float32
