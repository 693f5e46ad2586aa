"""Generated inputs for the `eager_inputs` pipeline: hypothesis strategies over size, dtype and layout.

The fixed-input pipelines ask one question per kernel (the spec's first size, its own dtype,
contiguous tensors). Users call kernels with 1 element, with sizes that straddle a block, with
fp16 and bf16, with transposed or sliced views; this module derives those inputs from the spec
(`make_inputs`, `dtypes`, `accepts_noncontiguous`, `max_size`) so every spec gets them for free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from harness.domain.evidence import error_type, first_line
from harness.domain.spec import KernelSpec

# Sizes around every power-of-two block a kernel is likely to use: one element, one either side.
BOUNDARY_SIZES: tuple[int, ...] = (1, 2, 3, 31, 33, 127, 129, 255, 257, 1023, 1025, 4095, 4097)
EXAMPLES_PER_TIER: dict[str, int] = {"gpu": 25, "cpu": 4}  # generated per dtype; the interpreter is slow


@dataclass(frozen=True)
class InputCase:
    """One generated input: dim-0 size, floating dtype, and whether tensors are strided views."""

    size: int
    dtype: torch.dtype
    contiguous: bool

    def describe(self) -> str:
        layout = "contiguous" if self.contiguous else "non-contiguous"
        return f"size={self.size}, dtype={_dtype_name(self.dtype)}, {layout}"

    def to_record(self) -> dict[str, Any]:
        return {"size": self.size, "dtype": _dtype_name(self.dtype), "contiguous": self.contiguous}


def max_size(spec: KernelSpec) -> int:
    return spec.max_size or 4 * max(spec.sizes)


def input_cases(spec: KernelSpec, dtype: torch.dtype) -> st.SearchStrategy[InputCase]:
    """Sizes biased to block boundaries (1 element included), both layouts, one dtype."""
    largest = max_size(spec)
    boundaries = [size for size in BOUNDARY_SIZES if size <= largest]
    sizes = st.one_of(st.sampled_from(boundaries), st.integers(min_value=1, max_value=largest))
    return st.builds(InputCase, size=sizes, dtype=st.just(dtype), contiguous=st.booleans())


def explicit_cases(spec: KernelSpec, dtype: torch.dtype) -> list[InputCase]:
    """Always tried, whatever hypothesis draws: one element, a small strided view, and past a block.

    Hypothesis does not shrink explicit examples, so the strided one is small (3) and the
    past-a-block one contiguous: whichever fails first is already a minimal question.
    """
    largest = max_size(spec)
    past_block = max(size for size in BOUNDARY_SIZES if size <= largest and size % 2 == 1)
    return [InputCase(1, dtype, True), InputCase(min(3, largest), dtype, False), InputCase(past_block, dtype, True)]


def _cast(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(dtype)
    return value


def _strided(value: Any) -> Any:
    """The same values in a non-contiguous view (every other element of a wider last dim)."""
    if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.numel() == 0:
        return value
    wide = torch.zeros((*value.shape[:-1], 2 * value.shape[-1]), dtype=value.dtype, device=value.device)
    view = wide[..., ::2]
    view.copy_(value)
    return view


def case_inputs(spec: KernelSpec, case: InputCase, device: torch.device, seed: int) -> tuple[Any, ...]:
    """The spec's own inputs at this size, cast to the case's dtype, as strided views when asked."""
    generator = torch.Generator().manual_seed(seed)
    args = spec.make_inputs(case.size, device, generator)
    if len(spec.dtypes) > 1 or case.dtype != spec.dtypes[0]:
        args = tuple(_cast(a, case.dtype) for a in args)
    if not case.contiguous:
        args = tuple(_strided(a) for a in args)
    return args


def explore(spec: KernelSpec, tier: str, check_case: Callable[[InputCase], None]) -> dict[str, Any]:
    """Run `check_case` over explicit and generated cases, one search per dtype; raise the first dtype's minimal failure.

    One search per dtype, so a kernel broken in bf16 still shows what it does in fp32 and fp16
    (`detail["failures"]` lists every dtype's minimal failing case). Derandomized and without an
    example database: the same spec asks the same cases on every run.
    """
    tried: list[InputCase] = []
    failures: list[FailingExample] = []
    examples = EXAMPLES_PER_TIER.get(tier, 8)
    for dtype in spec.dtypes:
        try:
            _search(spec, dtype, examples, check_case, tried)
        except Exception as exc:
            failures.append(FailingExample(tried[-1] if tried else None, exc))
    summary = {"examples": len(tried), "dtypes": [_dtype_name(d) for d in spec.dtypes],
               "sizes": [min(c.size for c in tried), max(c.size for c in tried)] if tried else [],
               "non_contiguous": sum(not c.contiguous for c in tried)}
    if failures:
        first = failures[0]
        first.summary = {**summary, "failures": [f.to_record() for f in failures]}
        raise first
    return summary


def _search(spec: KernelSpec, dtype: torch.dtype, examples: int, check_case: Callable[[InputCase], None],
            tried: list[InputCase]) -> None:
    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=(Phase.explicit, Phase.generate, Phase.shrink),
              report_multiple_bugs=False, print_blob=False)
    @given(case=input_cases(spec, dtype))
    def property_holds(case: InputCase) -> None:
        tried.append(case)
        check_case(case)

    for case in reversed(explicit_cases(spec, dtype)):  # decorators apply inside out: keep the listed order
        property_holds = example(case=case)(property_holds)
    property_holds()


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


class FailingExample(Exception):
    """Hypothesis's minimal failing case, with the exception it raised."""

    def __init__(self, case: InputCase | None, error: BaseException) -> None:
        self.case = case
        self.error = error
        self.summary: dict[str, Any] = {}
        where = case.describe() if case else "unknown case"
        super().__init__(f"falsifying example ({where}): {type(error).__name__}: {error}")

    def to_record(self) -> dict[str, Any]:
        inner = getattr(self.error, "error", self.error)  # a StageFailure carries the exception inside
        return {"example": self.case.to_record() if self.case else None, "stage": getattr(self.error, "stage", "run"),
                "error_type": error_type(inner), "error": first_line(inner)}
