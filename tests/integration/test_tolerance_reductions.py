"""Reductions that add rows one after another, as real kernels and Inductor do, err several times more than
PyTorch's cascaded sum: the reduction allowance passes them, and a row left out is still `wrong`.

Each test first measures, outside the harness, that the result does err more than FACTOR x PyTorch's own error,
so the pass is the reduction allowance's doing (without it these cells were `wrong`, the native control too).
"""

from pathlib import Path

import pytest
import torch

from harness.domain.spec import identity_wrap
from harness.domain.tolerance import FACTOR
from harness.run.cell import CellRequest
from harness.run.isolation import run_inline

pytestmark = pytest.mark.slow  # runs real cells in this process

PLUGIN = str(Path(__file__).parent / "plugins" / "sequential_sum_kernels.py")


def run(kernel: str, style: str, pipeline: str):
    return run_inline(CellRequest(kernel, style, pipeline, tier="cpu", kernels_from=[PLUGIN]))


def weight_gradient_case():
    from harness.domain.registry import load_specs

    spec = load_specs([PLUGIN])["sequential_row_scale"]
    x, w = spec.make_inputs(2048, torch.device("cpu"), torch.Generator().manual_seed(0))
    grad = torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    exact = (grad.double() * x.double()).sum(dim=0)
    torch_error = float(((grad * x).sum(dim=0).double() - exact).abs().max())
    return spec, x, w, grad, exact, torch_error


def test_a_row_by_row_weight_gradient_errs_more_than_factor_x_pytorch_and_passes():
    result = run("sequential_row_scale", "custom_op", "eager_backward")  # also puts this process on the CPU tier
    spec, x, w, grad, exact, torch_error = weight_gradient_case()
    _, grad_w = spec.backward(identity_wrap, x, w, grad)
    assert float((grad_w.double() - exact).abs().max()) > FACTOR * torch_error
    assert result.outcome == "pass", result.error
    assert "x sqrt(K=2048) x eps x max|exact|" in result.detail["tolerance"]["gradients[1]"]


def test_the_same_reduction_leaving_out_one_row_of_389_is_wrong():
    result = run("sequential_row_scale_missing_row", "custom_op", "eager_backward")
    assert result.outcome == "wrong" and result.error.startswith("gradients[1]: ")
    assert "differ beyond the allowance" in result.error


def test_the_native_controls_compiled_gradient_errs_more_than_factor_x_pytorch_and_is_not_wrong():
    """Inductor sums the rows of its compiled gradient in another order than eager PyTorch."""
    result = run("sequential_row_scale", "native", "compile_fullgraph_backward")
    _, x, w, grad, exact, torch_error = weight_gradient_case()
    torch._dynamo.reset()
    w = w.clone().requires_grad_(True)
    (compiled_grad_w,) = torch.autograd.grad(torch.compile(lambda x, w: x * w, fullgraph=True)(x, w), [w], grad)
    assert float((compiled_grad_w.double() - exact).abs().max()) > FACTOR * torch_error
    assert result.outcome == "pass", result.error
