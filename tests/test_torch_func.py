"""Higher-order autograd on tpu, against the same calls on CPU: torch.func,
forward-mode AD and double backward.

Per-sample gradients, model ensembles, Jacobians and Hessians are written
with torch.func; forward-mode AD (jvp, jacfwd, hessian) makes its known-zero
tangents with aten::_efficientzerotensor, which tpu had no kernel for.
Gradient penalties (WGAN-GP) and second-order meta-learning (MAML)
differentiate through backward graphs (create_graph=True).
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch.func import (
    functional_call,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stack_module_state,
    vjp,
    vmap,
)

import torch_tpu  # noqa: F401

DEV = "tpu"

torch.manual_seed(0)
X = torch.randn(4, 5)
W = torch.randn(5, 3)


def assert_same(tpu_result, cpu_result, atol=1e-5):
    tpu_leaves = torch.utils._pytree.tree_leaves(tpu_result)
    cpu_leaves = torch.utils._pytree.tree_leaves(cpu_result)
    assert len(tpu_leaves) == len(cpu_leaves)
    for t, c in zip(tpu_leaves, cpu_leaves):
        assert t.device.type == "tpu"
        torch.testing.assert_close(t.detach().cpu(), c.detach(), atol=atol, rtol=1e-5)


def on_both(f):
    return f("tpu"), f("cpu")


FUNCTIONS = {
    "grad": lambda d: grad(lambda x: (x.sin() ** 2).sum())(X.to(d)),
    "jacrev": lambda d: jacrev(lambda x: x.tanh() @ W.to(d))(X[0].to(d)),
    "jacfwd": lambda d: jacfwd(lambda x: x.tanh() @ W.to(d))(X[0].to(d)),
    "jacfwd_softmax": lambda d: jacfwd(lambda x: x.softmax(0))(X[0].to(d)),
    "hessian": lambda d: hessian(lambda x: (x.exp() * x).sum())(X[0].to(d)),
    "hessian_mse": lambda d: hessian(lambda w: ((X.to(d) @ w - 1) ** 2).mean())(W.to(d)),
    "jvp": lambda d: jvp(lambda x: x.sigmoid() * x, (X.to(d),), (torch.ones(4, 5, device=d),)),
    "vjp": lambda d: vjp(lambda x: x.softmax(-1), X.to(d))[1](torch.ones(4, 5, device=d)),
    "jacrev_layer_norm": lambda d: jacrev(lambda x: F.layer_norm(x, (5,)))(X[0].to(d)),
    "vmap_matmul": lambda d: vmap(lambda x, w: x @ w, in_dims=(0, None))(X.to(d), W.to(d)),
    "vmap_in_dims_1": lambda d: vmap(torch.mv, in_dims=(None, 1))(W.T.to(d), X.T.to(d)),
    "vmap_index": lambda d: vmap(lambda x, i: x[i])(X.to(d), torch.tensor([0, 1, 2, 3], device=d)),
    "vmap_sort": lambda d: vmap(lambda x: x.sort().values)(X.to(d)),
    "vmap_solve": lambda d: vmap(torch.linalg.solve)(
        torch.eye(3).repeat(4, 1, 1).to(d) * 2 + 0.1, X[:, :3].to(d)
    ),
    "hessian_of_jacrev": lambda d: jacfwd(jacrev(lambda x: (x.sin() * x.cos()).sum()))(X[1].to(d)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_transform_matches_cpu(name):
    assert_same(*on_both(FUNCTIONS[name]))


def small_model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def test_per_sample_gradients():
    base = small_model()

    def per_sample(d):
        model = copy.deepcopy(base).to(d)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            return F.cross_entropy(functional_call(model, p, (x.unsqueeze(0),)), y.unsqueeze(0))

        y = torch.tensor([0, 1, 1, 0], device=d)
        return vmap(grad(loss), in_dims=(None, 0, 0))(params, X.to(d), y)

    tpu, cpu = on_both(per_sample)
    assert set(tpu) == set(cpu)
    assert_same(tpu, cpu)
    assert tpu["0.weight"].shape == (4, 8, 5)


def test_model_ensemble():
    models = [small_model() for _ in range(3)]
    for i, m in enumerate(models):
        with torch.no_grad():
            m[0].weight.add_(i)

    def ensemble(d):
        params, buffers = stack_module_state([copy.deepcopy(m).to(d) for m in models])
        skeleton = copy.deepcopy(models[0]).to("meta")

        def f(p, b, x):
            return functional_call(skeleton, (p, b), (x,))

        return vmap(f, in_dims=(0, 0, None))(params, buffers, X.to(d))

    assert_same(*on_both(ensemble))


def test_forward_ad_dual_tensors():
    import torch.autograd.forward_ad as fwAD

    def f(d):
        with fwAD.dual_level():
            x = fwAD.make_dual(X.to(d), torch.ones_like(X, device=d))
            y = (x.exp() * W.to(d)[:, :1].T.expand(4, 5)).tanh().sum(1)
            return fwAD.unpack_dual(y).tangent

    assert_same(*on_both(f))


def test_autograd_functional_forward_mode():
    def f(d):
        # (a matmul here hits a forward-mode bug of PyTorch's own, on CPU too)
        def fn(x):
            return (x.sin().unsqueeze(0) * W.to(d).T).sum(1).pow(2)

        jac = torch.autograd.functional.jacobian(
            fn, X[0].to(d), vectorize=True, strategy="forward-mode"
        )
        hes = torch.autograd.functional.hessian(
            lambda x: fn(x).sum(), X[0].to(d), outer_jacobian_strategy="forward-mode", vectorize=True
        )
        return jac, hes

    assert_same(*on_both(f))


def test_randomness_under_vmap():
    x = torch.zeros(3, 4, device="tpu")
    different = vmap(lambda t: t + torch.rand(4, device="tpu"), randomness="different")(x)
    same = vmap(lambda t: t + torch.rand(4, device="tpu"), randomness="same")(x)
    assert not torch.equal(different[0], different[1])
    assert torch.equal(same[0], same[1]) and torch.equal(same[1], same[2])
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda t: t + torch.rand(4, device="tpu"))(x)


# ZeroTensors: what forward-mode AD makes, used directly as CPU allows.


def zero(d):
    return torch._efficientzerotensor((2, 3), device=d)


ZERO_USES = {
    "add": lambda z, d: z + torch.arange(6.0, device=d).view(2, 3),
    "mul": lambda z, d: z * torch.ones(2, 3, device=d),
    "matmul": lambda z, d: z @ torch.ones(3, 2, device=d),
    "exp": lambda z, d: z.exp(),
    "sum": lambda z, d: z.sum(1),
    "clone": lambda z, d: z.clone(),
    "view": lambda z, d: z.view(6) + 1,
    "index": lambda z, d: z[1],
    "cat": lambda z, d: torch.cat([z, torch.ones(2, 3, device=d)]),
    "to_double": lambda z, d: z.double(),
    "dot": lambda z, d: torch.dot(z.view(6), torch.ones(6, device=d)),
    "vdot": lambda z, d: torch.vdot(torch.ones(6, device=d), z.view(6)),
    "copy_from": lambda z, d: torch.ones(2, 3, device=d).copy_(z),
    "to_cpu": lambda z, d: z.cpu(),
}


@pytest.mark.parametrize("name", sorted(ZERO_USES))
def test_zero_tensor_use(name):
    tpu, cpu = on_both(lambda d: ZERO_USES[name](zero(d), d))
    if name == "to_cpu":  # (CPU's .cpu() returns the ZeroTensor itself)
        assert tpu.device.type == "cpu"
    else:
        assert tpu.device.type == "tpu"
        assert tpu._is_zerotensor() == cpu._is_zerotensor()
    torch.testing.assert_close(tpu.cpu(), cpu)


def test_zero_tensor_is_immutable():
    z = zero("tpu")
    assert z._is_zerotensor() and z.device.type == "tpu"
    with pytest.raises(RuntimeError, match="ZeroTensors are immutable"):
        z.add_(1)
    with pytest.raises(RuntimeError, match="ZeroTensors are immutable"):
        z.copy_(torch.ones(2, 3, device="tpu"))
    # a clone is an ordinary tensor
    c = z.clone()
    assert not c._is_zerotensor()
    c.add_(1)
    assert torch.equal(c.cpu(), torch.ones(2, 3))


def test_zero_tensor_reaching_a_kernel_is_an_error():
    # Below the ZeroTensor key a tpu kernel sees the tensor itself: a clear
    # error naming the op, never a read through its missing buffer.
    z = zero("tpu")
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.ZeroTensor)
    with torch._C._ExcludeDispatchKeyGuard(keys):
        with pytest.raises(RuntimeError, match="exp: got a tensor with no tpu buffer \\(a ZeroTensor"):
            z.exp()
        with pytest.raises(RuntimeError, match="add_.Tensor: got a tensor with no tpu buffer \\(a ZeroTensor"):
            torch.ones(2, 3, device="tpu").add_(z)


def assert_grads_match(cpu_grads, tpu_grads):
    """Every gradient (None where CPU's is None), within 1e-5 of the largest
    (a bias ahead of a batch norm has a gradient of rounding noise only)."""
    assert [g is None for g in tpu_grads] == [g is None for g in cpu_grads]
    scale = max(float(g.abs().max()) for g in cpu_grads if g is not None)
    for t, c in zip(tpu_grads, cpu_grads):
        if c is not None:
            assert t.device.type == DEV
            torch.testing.assert_close(t.cpu(), c, atol=1e-5 * scale, rtol=1e-4)


class SelfAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm = torch.nn.LayerNorm(8)
        self.out = torch.nn.Linear(8, 1)

    def forward(self, x):
        y, _ = self.attention(x, x, x, need_weights=True)
        return self.out(torch.nn.functional.gelu(self.norm(x + y)))


GP_MODELS = {
    "conv_leaky_relu_pool": (lambda: torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.LeakyReLU(0.2), torch.nn.MaxPool2d(2),
        torch.nn.AvgPool2d(2), torch.nn.Flatten(), torch.nn.Linear(16, 1)), (2, 3, 8, 8)),
    "norms_and_activations": (lambda: torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.SiLU(), torch.nn.GroupNorm(2, 4),
        torch.nn.Mish(), torch.nn.ConvTranspose2d(4, 2, 3, stride=2), torch.nn.InstanceNorm2d(2),
        torch.nn.Tanh(), torch.nn.Flatten(), torch.nn.Linear(2 * 9 * 9, 1)), (2, 3, 6, 6)),
    # (need_weights: the math attention, which CPU can differentiate twice)
    "attention": (lambda: SelfAttention(), (2, 5, 8)),
}


@pytest.mark.parametrize("name", sorted(GP_MODELS))
def test_gradient_penalty_double_backward(name):
    make, shape = GP_MODELS[name]
    results = []
    for device in ("cpu", DEV):
        torch.manual_seed(0)
        model = make().to(device)
        x = torch.randn(*shape).to(device).requires_grad_()
        (g,) = torch.autograd.grad(model(x).sum(), x, create_graph=True)
        penalty = (g.flatten(1).norm(dim=1) - 1).pow(2).mean()
        penalty.backward()
        results.append([p.grad for p in model.parameters()] + [x.grad])
    assert_grads_match(*results)


def test_maml_second_order():
    results = []
    for device in ("cpu", DEV):
        torch.manual_seed(0)
        model = small_model().to(device)
        x, y = torch.randn(6, 5).to(device), torch.tensor([0, 1, 1, 0, 1, 0], device=device)
        params = dict(model.named_parameters())
        for _ in range(2):  # two inner steps, each differentiated through
            loss = F.cross_entropy(functional_call(model, params, (x,)), y)
            grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
            params = {k: v - 0.5 * g for (k, v), g in zip(params.items(), grads)}
        F.cross_entropy(functional_call(model, params, (x,)), y).backward()
        results.append([p.grad for p in model.parameters()])
    assert_grads_match(*results)
