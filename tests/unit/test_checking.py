"""Checks against the reference: dtype-aware tolerances, and a first line that says what differs."""

import pytest
import torch

from harness.domain.checking import MismatchError, assert_matches, tolerance
from harness.domain.evidence import error_type, first_line


def test_within_tolerance_passes_beyond_it_is_wrong():
    ref = torch.ones(10)
    assert_matches(ref + 1e-7, ref)
    with pytest.raises(MismatchError, match=r"1 of 10 elements differ .* first at flat index 3"):
        bad = ref.clone()
        bad[3] = 2
        assert_matches(bad, ref)


def test_bf16_is_judged_with_bf16_tolerance():
    assert tolerance(torch.bfloat16)[0] > tolerance(torch.float32)[0]
    ref = torch.ones(4, dtype=torch.bfloat16)
    assert_matches(ref * 1.0078125, ref)  # one bf16 ulp above 1


@pytest.mark.parametrize("got, message", [
    (torch.ones(3, dtype=torch.float64), "dtype torch.float64 != reference torch.float32"),
    (torch.ones(4), r"shape \(4,\) != reference \(3,\)"),
    ((torch.ones(3), torch.ones(3)), "2 values, reference has 1"),
    (torch.tensor([1.0, float("nan"), 1.0]), "1 of 3 elements differ"),
])
def test_structure_dtype_shape_and_nan_are_checked(got, message):
    with pytest.raises(MismatchError, match=message):
        assert_matches(got, torch.ones(3))


def test_evidence_looks_through_wrappers():
    class InterpreterError(Exception):
        pass

    try:
        try:
            raise ValueError("the real problem:\n  in detail")
        except ValueError as inner:
            raise InterpreterError(repr(inner)) from inner
    except InterpreterError as wrapped:
        assert first_line(wrapped) == "the real problem: in detail"
        assert error_type(wrapped) == "InterpreterError(ValueError)"
