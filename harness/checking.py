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


def assert_matches(actual: Any, expected: Any, what: str = "output") -> None:
    """Raise MismatchError naming the first difference; structure, dtype and shape must match too."""
    actual_leaves, expected_leaves = _flatten(actual), _flatten(expected)
    if len(actual_leaves) != len(expected_leaves):
        raise MismatchError(f"{what}: {len(actual_leaves)} values, reference has {len(expected_leaves)}")
    for index, (got, want) in enumerate(zip(actual_leaves, expected_leaves)):
        label = what if len(expected_leaves) == 1 else f"{what}[{index}]"
        if not isinstance(want, torch.Tensor):
            if got != want:
                raise MismatchError(f"{label}: {got!r} != reference {want!r}")
            continue
        if not isinstance(got, torch.Tensor):
            raise MismatchError(f"{label}: got {type(got).__name__}, reference is a Tensor")
        if got.dtype != want.dtype:
            raise MismatchError(f"{label}: dtype {got.dtype} != reference {want.dtype}")
        if tuple(got.shape) != tuple(want.shape):
            raise MismatchError(f"{label}: shape {tuple(got.shape)} != reference {tuple(want.shape)}")
        rtol, atol = tolerance(want.dtype)
        got_plain, want_plain = _plain(got), _plain(want)
        if got_plain.is_floating_point():
            got_f, want_f = got_plain.double(), want_plain.double()
            bad = ~torch.isclose(got_f, want_f, rtol=rtol, atol=atol, equal_nan=True)
        else:
            got_f, want_f = got_plain, want_plain
            bad = got_plain != want_plain
        if bool(bad.any()):
            flat_index = int(bad.flatten().nonzero()[0])
            count = int(bad.sum())
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
    actual_leaves, native_leaves, exact_leaves = _flatten(actual), _flatten(native), _flatten(exact)
    if len(actual_leaves) != len(native_leaves):
        raise MismatchError(f"{what}: {len(actual_leaves)} values, reference has {len(native_leaves)}")
    for index, (got, want, best) in enumerate(zip(actual_leaves, native_leaves, exact_leaves)):
        label = what if len(native_leaves) == 1 else f"{what}[{index}]"
        if not (isinstance(want, torch.Tensor) and want.is_floating_point()):
            assert_matches(got, want, what=label)
            continue
        if not isinstance(got, torch.Tensor):
            raise MismatchError(f"{label}: got {type(got).__name__}, reference is a Tensor")
        if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
            raise MismatchError(f"{label}: {got.dtype} {tuple(got.shape)} != reference {want.dtype} {tuple(want.shape)}")
        rtol, atol = tolerance(want.dtype)
        got_f, want_f, best_f = _plain(got).double(), _plain(want).double(), _plain(best).double()
        allowed = atol + rtol * best_f.abs() + 2 * (want_f - best_f).abs()
        error = (got_f - best_f).abs()
        bad = ~((error <= allowed) | (got_f.isnan() & best_f.isnan()))
        if bool(bad.any()):
            flat_index = int(bad.flatten().nonzero()[0])
            raise MismatchError(
                f"{label}: {int(bad.sum())} of {want.numel()} elements differ from the fp32 answer beyond "
                f"rtol={rtol:g} atol={atol:g} plus twice PyTorch's own error; first at flat index {flat_index}: "
                f"{got_f.flatten()[flat_index].item()!r} vs {best_f.flatten()[flat_index].item()!r} "
                f"(PyTorch {want_f.flatten()[flat_index].item()!r})"
            )
