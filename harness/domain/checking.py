"""Compares what a pipeline produced with the PyTorch reference, with tolerances taken from the dtype."""

from __future__ import annotations

from typing import Any

import torch

# (rtol, atol) per dtype: torch.testing's defaults, loosened for reduced precision where
# the kernel's fp32 math and the reference's rounding may differ by one unit in the last place.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}


class MismatchError(AssertionError):
    """The pipeline ran but its result differs from the reference: the cell is `wrong`."""


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return TOLERANCES.get(dtype, (0.0, 0.0))


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


def _first_bad(bad: torch.Tensor) -> tuple[int, int] | None:
    """(how many elements are bad, flat index of the first), or None when none is."""
    if not bool(bad.any()):
        return None
    return int(bad.sum()), int(bad.flatten().nonzero()[0])


def assert_matches(actual: Any, expected: Any, what: str = "output") -> None:
    """Raise MismatchError naming the first difference; structure, dtype and shape must match too."""
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
            raise MismatchError(
                f"{label}: {count} of {want.numel()} elements differ beyond rtol={rtol:g} atol={atol:g}; "
                f"first at flat index {flat_index}: {got_f.flatten()[flat_index].item()!r} vs reference "
                f"{want_f.flatten()[flat_index].item()!r}"
            )


def assert_close_to_exact(actual: Any, native: Any, exact: Any, what: str = "output") -> None:
    """Low-precision check: PyTorch's own result (`native`) fixes dtype and shape; values are held to the exact answer.

    `exact` is the reference computed in fp32 from the same values. An element may be off by the
    dtype's tolerance plus twice PyTorch's own error at that element: a kernel that rounds once is
    never held to a stricter standard than PyTorch, which may round at every intermediate step.
    """
    for label, got, want, best in _leaves(what, actual, native, exact):
        if not (isinstance(want, torch.Tensor) and want.is_floating_point()):
            assert_matches(got, want, what=label)
            continue
        _check_like(label, got, want)
        rtol, atol = tolerance(want.dtype)
        got_f, want_f, best_f = _plain(got).double(), _plain(want).double(), _plain(best).double()
        allowed = atol + rtol * best_f.abs() + 2 * (want_f - best_f).abs()
        error = (got_f - best_f).abs()
        first = _first_bad(~((error <= allowed) | (got_f.isnan() & best_f.isnan())))
        if first:
            count, flat_index = first
            raise MismatchError(
                f"{label}: {count} of {want.numel()} elements differ from the fp32 answer beyond "
                f"rtol={rtol:g} atol={atol:g} plus twice PyTorch's own error; first at flat index {flat_index}: "
                f"{got_f.flatten()[flat_index].item()!r} vs {best_f.flatten()[flat_index].item()!r} "
                f"(PyTorch {want_f.flatten()[flat_index].item()!r})"
            )
