"""eager_inputs: generated sizes, dtypes and strided views find planted bugs and name the failing input."""

from pathlib import Path

import pytest
import torch

from harness.domain.inputs import InputCase, case_inputs, explicit_cases
from harness.run.cell import CellRequest
from harness.run.environment import resolve_tier
from harness.run.isolation import run_inline
from kernels import softmax

pytestmark = pytest.mark.slow  # runs real cells in this process

TIER = resolve_tier("auto")
KERNELS = str(Path(__file__).with_name("input_kernels.py"))


def run(kernel: str, style: str = "raw"):
    return run_inline(CellRequest(kernel, style, "eager_inputs", tier=TIER, kernels_from=[KERNELS]))


def test_strided_views_keep_the_values_and_are_not_contiguous():
    case = InputCase(size=5, dtype=torch.float16, contiguous=False)
    (x,) = case_inputs(softmax.SPEC, case, torch.device("cpu"), seed=0)
    (plain,) = softmax.SPEC.make_inputs(5, torch.device("cpu"), torch.Generator().manual_seed(0))
    assert not x.is_contiguous() and x.dtype == torch.float16
    assert torch.equal(x, plain.to(torch.float16))


def test_every_dtype_is_asked_with_one_element_and_past_a_block():
    cases = explicit_cases(softmax.SPEC, torch.float16)
    assert cases[0] == InputCase(1, torch.float16, True)
    assert any(not c.contiguous and c.size > 1 for c in cases)
    assert max(c.size for c in cases) > 128  # softmax's rows are one block each: several hundred rows


def test_a_kernel_claiming_strided_views_it_mishandles_is_wrong_with_the_example():
    result = run("flat_claims_strided")
    assert result.outcome == "wrong" and result.stage == "check"
    assert result.error.startswith("[size=3, dtype=float32, non-contiguous] output:")
    assert result.detail["example"] == {"size": 3, "dtype": "float32", "contiguous": False}
    assert [f["example"]["dtype"] for f in result.detail["failures"]] == ["float32", "float16"]


def test_a_dropped_tail_is_found_at_one_element():
    result = run("dropped_tail")
    assert result.outcome == "wrong"
    assert result.detail["example"]["size"] == 1


def test_refusing_a_strided_view_is_allowed_when_not_claimed():
    result = run("refuses_strided")
    assert result.outcome == "pass", result
    assert result.detail["non_contiguous"] > 0 and result.detail["dtypes"] == ["float32", "float16"]


def test_refusing_a_strided_view_fails_when_claimed():
    result = run("refuses_but_claims")
    assert result.outcome == "fail" and result.stage == "run" and result.error_type == "ValueError"
    assert "non-contiguous" in result.error


@pytest.mark.parametrize("style", ["native", "custom_op", "triton_op"])
def test_a_correct_kernel_passes_in_every_dtype(style):
    result = run_inline(CellRequest("softmax", style, "eager_inputs", tier=TIER))
    assert result.outcome == "pass", result
    assert result.detail["dtypes"] == ["float32", "float16", "bfloat16"]
