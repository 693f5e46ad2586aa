"""The `wrap_triton` style: a bare torch.library.wrap_triton launch, no operator, autograd only through a Function."""

import re

import pytest
import torch

from harness.domain.styles import SkipCell, build_style
from harness.run.environment import resolve_tier
from kernels import add, silu

DEVICE = torch.device("cuda" if resolve_tier("auto") == "gpu" else "cpu")


def test_without_a_backward_it_is_a_plain_function_named_after_the_kernel():
    built = build_style(add.SPEC, "wrap_triton")
    assert built.overload is None and built.custom_op_def is None
    assert built.call.__name__ == "add" and built.kernel_names == ("add_kernel",)


def test_it_launches_through_wrap_triton(monkeypatch):
    wrapped = []
    real = torch.library.wrap_triton
    monkeypatch.setattr(torch.library, "wrap_triton", lambda kernel: wrapped.append(kernel) or real(kernel))
    built = build_style(add.SPEC, "wrap_triton")
    x, y = add.SPEC.make_inputs(64, DEVICE, torch.Generator().manual_seed(0))
    torch.testing.assert_close(built.call(x, y), x + y)
    assert wrapped == [add.add_kernel]


def test_with_a_backward_it_trains_through_an_autograd_function():
    built = build_style(silu.SPEC, "wrap_triton")
    (x,) = silu.SPEC.make_inputs(64, DEVICE, torch.Generator().manual_seed(0))
    x_ours, x_reference = x.clone().requires_grad_(), x.clone().requires_grad_()
    built.call(x_ours).float().sum().backward()
    silu.SPEC.reference(x_reference).float().sum().backward()
    torch.testing.assert_close(x_ours.grad, x_reference.grad)
    assert built.overload is None


def test_a_torch_without_wrap_triton_skips_with_the_version(monkeypatch):
    monkeypatch.delattr(torch.library, "wrap_triton")
    with pytest.raises(SkipCell, match=re.escape(f"torch {torch.__version__} has no torch.library.wrap_triton")):
        build_style(add.SPEC, "wrap_triton")
