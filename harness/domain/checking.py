"""Compares what a pipeline produced with the PyTorch reference: structure, dtype, shape, then values (tolerance model)."""

from __future__ import annotations

from typing import Any

import torch

from harness.domain.poison import unwritten_note
from harness.domain.tolerance import DEFAULT_TOLERANCES, ToleranceOverride, allowance, default_tolerance

TOLERANCES = DEFAULT_TOLERANCES  # the dtype defaults (torch.testing's); the model is in harness.domain.tolerance


class MismatchError(AssertionError):
    """The pipeline ran but its result differs from the reference: the cell is `wrong`."""


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return default_tolerance(dtype)


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().to("cpu")


def _leaves(what: str, actual: Any, *expected: Any) -> list[tuple[Any, ...]]:
    """(label, actual leaf, expected leaves...) per leaf, after checking both sides have as many values."""
    actual_leaves = _flatten(actual)
    expected_leaves = [_flatten(tree) for tree in expected]
    if len(actual_leaves) != len(expected_leaves[0]):
        raise MismatchError(f"{what}: {len(actual_leaves)} values, reference has {len(expected_leaves[0])}")
    single = len(actual_leaves) == 1
    return [(what if single else f"{what}[{index}]", *leaves)
            for index, leaves in enumerate(zip(actual_leaves, *expected_leaves))]


def _check_like(label: str, got: Any, want: torch.Tensor) -> None:
    """A tensor of the reference's dtype and shape, or MismatchError saying which differs."""
    if not isinstance(got, torch.Tensor):
        raise MismatchError(f"{label}: got {type(got).__name__}, reference is a Tensor")
    if got.dtype != want.dtype:
        raise MismatchError(f"{label}: dtype {got.dtype} != reference {want.dtype}")
    if tuple(got.shape) != tuple(want.shape):
        raise MismatchError(f"{label}: shape {tuple(got.shape)} != reference {tuple(want.shape)}")


def _mismatch(label: str, got: torch.Tensor, message: str) -> MismatchError:
    """The mismatch of one leaf, led by the evidence that the op never wrote it where it still holds the poison."""
    never_written = unwritten_note(got)
    return MismatchError(f"{label}: {never_written}; {message}" if never_written else f"{label}: {message}")


def _first_bad(bad: torch.Tensor) -> tuple[int, int] | None:
    """(how many elements are bad, flat index of the first), or None when none is."""
    if not bool(bad.any()):
        return None
    return int(bad.sum()), int(bad.flatten().nonzero()[0])


def assert_matches(actual: Any, expected: Any, what: str = "output") -> None:
    """Raise MismatchError naming the first difference beyond the dtype default; structure, dtype and shape must
    match too. Strict: no float64 answer; pipelines use `assert_close`."""
    for label, got, want in _leaves(what, actual, expected):
        if not isinstance(want, torch.Tensor):
            if got != want:
                raise MismatchError(f"{label}: {got!r} != reference {want!r}")
            continue
        _check_like(label, got, want)
        rtol, atol = tolerance(want.dtype)
        got_plain, want_plain = _plain(got), _plain(want)
        if got_plain.is_floating_point():
            got_f, want_f = got_plain.double(), want_plain.double()
            bad = ~torch.isclose(got_f, want_f, rtol=rtol, atol=atol, equal_nan=True)
        else:
            got_f, want_f = got_plain, want_plain
            bad = got_plain != want_plain
        first = _first_bad(bad)
        if first:
            count, flat_index = first
            raise _mismatch(
                label, got, f"{count} of {want.numel()} elements differ beyond rtol={rtol:g} atol={atol:g}; "
                f"first at flat index {flat_index}: {got_f.flatten()[flat_index].item()!r} vs reference "
                f"{want_f.flatten()[flat_index].item()!r}"
            )


def assert_close(actual: Any, reference: Any, exact: Any | None, what: str = "output",
                 overrides: tuple[ToleranceOverride, ...] = (), judged: dict[str, str] | None = None,
                 inputs_numel: int = 0) -> None:
    """The tolerance model (harness.domain.tolerance, docs/tolerance.md): every floating leaf is held to `exact`
    (the reference run in float64) within the larger of the dtype's default and FACTOR x the `reference`'s own
    error; `reference` (the run in the result's dtype) fixes dtype and shape. An element equal to the reference's
    is never wrong. Without `exact` (the float64 run failed) a leaf is held to `reference` with the default alone.
    `judged` (a cell's detail) receives each leaf's rule. `inputs_numel` (the largest floating input's numel)
    over a leaf's numel is how many inputs may feed each of its elements: the length of a reduction."""
    exact_tree = exact if exact is not None else reference
    for label, got, want, best in _leaves(what, actual, reference, exact_tree):
        if not (isinstance(want, torch.Tensor) and want.is_floating_point()):
            assert_matches(got, want, what=label)
            continue
        _check_like(label, got, want)
        best_plain = _plain(best) if exact is not None and isinstance(best, torch.Tensor) else None
        if best_plain is not None and tuple(best_plain.shape) != tuple(want.shape):
            best_plain = None  # the float64 run answered in another shape: no exact answer for this leaf
        want_plain = _plain(want)
        rule = allowance(want_plain, best_plain, label, overrides, inputs_per_output=inputs_numel / max(want.numel(), 1))
        if judged is not None:
            judged[label] = rule.rule()
        got_f, want_f = _plain(got).double(), want_plain.double()
        target = best_plain.double() if best_plain is not None else want_f
        error = (got_f - target).abs()
        same_as_reference = (got_f == want_f) | (got_f.isnan() & want_f.isnan())
        good = (error <= rule.allowed) | same_as_reference | (got_f.isnan() & target.isnan())
        first = _first_bad(~good)
        if first:
            count, flat_index = first
            bad_errors = torch.where(good, torch.zeros_like(error), error.nan_to_num(nan=float("inf")))
            worst = int(bad_errors.flatten().argmax())
            answer = "fp64 answer" if best_plain is not None else "reference"
            raise _mismatch(
                label, got, f"{count} of {want.numel()} elements differ beyond the allowance "
                f"(max err {float(bad_errors.flatten()[worst]):.2g}, "
                f"{rule.at(worst, abs(float(target.flatten()[worst])))}); "
                f"first at flat index {flat_index}: {got_f.flatten()[flat_index].item()!r} vs {answer} "
                f"{target.flatten()[flat_index].item()!r} (PyTorch {want_f.flatten()[flat_index].item()!r})"
            )
