"""How tpu's kernels sit in PyTorch's dispatcher. A tpu kernel for an op
that PyTorch implements as CompositeImplicitAutograd replaces the composite
for tpu tensors, autograd's recording of it included: unless an autograd
kernel comes with it, gradients through the op are silently lost (this is
how conj_physical's gradient went missing)."""

import torch

import torch_tpu  # noqa: F401


def test_no_tpu_kernel_hides_a_composite_from_autograd():
    C = torch._C
    hidden = [name for name in C._dispatch_get_all_op_names()
              if C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1")
              and C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd")
              and not C._dispatch_has_kernel_for_dispatch_key(name, "AutogradPrivateUse1")]
    assert hidden == []


def test_the_check_sees_tpu_kernels():
    # (so the test above cannot pass by seeing nothing)
    C = torch._C
    for name in ("aten::add.Tensor", "aten::_fft_c2c", "aten::_ctc_loss", "aten::im2col"):
        assert C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"), name
    assert C._dispatch_has_kernel_for_dispatch_key("aten::conj_physical",
                                                   "CompositeImplicitAutograd")
