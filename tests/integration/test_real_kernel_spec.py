"""kernels/rms_norm.py in every style, eager: the RSTD its forward saves reaches the backward, the offset (a float
argument) reaches it too, and the user sees the output alone, never the intermediate."""

import dataclasses

import pytest
import torch

from harness.domain.styles import build_style
from harness.run.environment import resolve_tier
from kernels import rms_norm

DEVICE = torch.device("cuda" if resolve_tier("auto") == "gpu" else "cpu")
OFFSET = 0.5  # not the catalogue's 1.0: a backward that fell back on a constant gets the gradients wrong
BACKWARD_STYLES = ("autograd_function", "custom_op", "triton_op", "wrap_triton")


def inputs(requires_grad=False):
    x, weight, eps, _ = rms_norm.make_inputs(64, DEVICE, torch.Generator().manual_seed(0))
    return x.requires_grad_(requires_grad), weight.requires_grad_(requires_grad), eps, OFFSET


def spied(name):
    """rms_norm under another operator name, its backward recording what it was given."""
    seen = {}

    def backward(wrap, *tensors, offset):
        seen.update(tensors=[t.detach().clone() for t in tensors], offset=offset)
        return rms_norm.backward(wrap, *tensors, offset=offset)

    return dataclasses.replace(rms_norm.SPEC, name=name, backward=backward), seen


@pytest.mark.parametrize("style", ["native", "raw", *BACKWARD_STYLES])
def test_the_user_sees_the_output_alone(style):
    args = inputs()
    output = build_style(rms_norm.SPEC, style).call(*args)
    assert isinstance(output, torch.Tensor)
    torch.testing.assert_close(output, rms_norm.reference(*args))


@pytest.mark.parametrize("style", BACKWARD_STYLES)
def test_the_saved_rstd_and_the_offset_reach_the_backward(style):
    spec, seen = spied(f"rms_norm_spied_{style}")
    x, weight, eps, offset = inputs(requires_grad=True)
    output = build_style(spec, style).call(x, weight, eps, offset)
    output.backward(torch.ones_like(output))

    saved_x, saved_weight, saved_rstd, _grad = seen["tensors"]
    expected_rstd = torch.rsqrt(x.detach().pow(2).mean(dim=-1) + eps)
    torch.testing.assert_close(saved_rstd, expected_rstd)  # the forward's own RSTD, not recomputed
    torch.testing.assert_close(saved_x, x.detach())
    assert seen["offset"] == OFFSET


@pytest.mark.parametrize("style", BACKWARD_STYLES)
def test_gradients_use_the_offset_the_caller_gave(style):
    x, weight, eps, offset = inputs(requires_grad=True)
    grads = torch.autograd.grad(build_style(rms_norm.SPEC, style).call(x, weight, eps, offset).sum(), (x, weight))
    rx, rw = (t.detach().double().requires_grad_(True) for t in (x, weight))
    expected = torch.autograd.grad(rms_norm.reference(rx, rw, eps, offset).sum(), (rx, rw))
    for got, want in zip(grads, expected):  # against float64: 64 rows of fp32 partial sums stay within 1e-4
        torch.testing.assert_close(got.double(), want, rtol=1e-4, atol=1e-4)
