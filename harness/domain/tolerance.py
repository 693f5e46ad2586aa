"""The tolerance model: how far a result may be from the exact answer before the cell is `wrong` (docs/tolerance.md).

Every floating output, gradient and mutated argument is held to the reference computed in float64
(the exact answer). The allowance is the largest of
  - the dtype's default (torch.testing's rtol/atol, or a spec's override for this dtype and output),
  - FACTOR x the dtype reference's own error: the largest |reference run in the tensor's dtype - exact|
    over the whole tensor (per tensor, not per element: see docs/tolerance.md for why), and
  - for a reduction, REDUCTION_FACTOR x sqrt(K) x eps x max|exact|: the rounding of a sum of K terms in
    another order than PyTorch's, K being how many input elements there are per output element.
A kernel that rounds or reduces in another order than PyTorch is then never held to a stricter
standard than PyTorch's own result, while an error larger than rounding (a row left out, an
element shifted) stays `wrong`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

# (rtol, atol) per dtype: torch.testing.assert_close's defaults.
DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}

# How many times the dtype reference's own error a result may be off: a different reduction order or
# one more rounding step lands within a small multiple of PyTorch's own error, a real bug far beyond it.
FACTOR = 4.0

# PyTorch's own reductions are cascaded and very accurate, so FACTOR x their error is too little for a kernel
# (or Inductor's compiled gradient) that adds rows one after another: measured, Inductor's compiled gradient of
# x * w over 2,048 rows erred 8.4x PyTorch's eager one, a per-program sum of 256 rows each 5.9x. A sum of K
# terms in another order rounds differently by about sqrt(K) units of the result's magnitude; a fully
# sequential fp32 sum of 512 to 32,768 rows used at most 18% of this allowance (docs/tolerance.md).
REDUCTION_FACTOR = 2.0


def accumulation_eps(dtype: torch.dtype) -> float:
    """The unit of rounding a reduction accumulates in: fp32's for fp32 and narrower dtypes (kernels and
    PyTorch accumulate fp16/bf16 in fp32), the dtype's own for float64."""
    return torch.finfo(dtype).eps if torch.finfo(dtype).bits > 32 else torch.finfo(torch.float32).eps

DTYPE_NAMES = {torch.float64: "fp64", torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def default_tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for `dtype`: torch.testing's defaults; (0, 0) for dtypes compared exactly."""
    return DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))


def dtype_name(dtype: torch.dtype) -> str:
    return DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


@dataclass(frozen=True)
class ToleranceOverride:
    """A spec's own (rtol, atol) floor for one dtype and/or one output, like OpInfo's `toleranceOverride`.

    dtype: the dtype it applies to (None: every dtype).
    output: the checked value it applies to, as the harness labels it: "output", "output[1]",
        "gradients" (every gradient), "gradients[0]", "mutated arguments"... (None: every value).
    reason: why the kernel needs it; shown in the cell's detail and the report.
    The allowance from the reference's own error still applies on top: an override only replaces the dtype default.
    """

    rtol: float
    atol: float
    dtype: torch.dtype | None = None
    output: str | None = None
    reason: str = ""

    def applies_to(self, dtype: torch.dtype, label: str) -> bool:
        if self.dtype is not None and self.dtype != dtype:
            return False
        return self.output is None or self.output in (label, label.split("[", 1)[0])

    def describe(self) -> str:
        scope = ", ".join(part for part in (dtype_name(self.dtype) if self.dtype else "",
                                            self.output or "") if part) or "every output"
        because = f": {self.reason}" if self.reason else ""
        return f"override for {scope} rtol={self.rtol:g} atol={self.atol:g}{because}"


def override_problems(overrides: object) -> list[str]:
    """What is wrong with a spec's `tolerance` field (for spec_problems)."""
    if not isinstance(overrides, tuple):
        return ["tolerance must be a tuple of ToleranceOverride"]
    problems = []
    for item in overrides:
        if not isinstance(item, ToleranceOverride):
            problems.append(f"tolerance holds {type(item).__name__}, not ToleranceOverride")
        elif item.rtol < 0 or item.atol < 0:
            problems.append("tolerance overrides need rtol >= 0 and atol >= 0")
        elif item.dtype is not None and not (isinstance(item.dtype, torch.dtype) and item.dtype.is_floating_point):
            problems.append(f"tolerance override dtype {item.dtype!r} is not a floating torch dtype")
    return problems


def floor_for(dtype: torch.dtype, label: str,
              overrides: tuple[ToleranceOverride, ...] = ()) -> tuple[float, float, ToleranceOverride | None]:
    """(rtol, atol, the override that set them or None): the last matching override wins, as in a spec read top-down."""
    chosen = None
    for override in overrides:
        if override.applies_to(dtype, label):
            chosen = override
    if chosen is not None:
        return chosen.rtol, chosen.atol, chosen
    rtol, atol = default_tolerance(dtype)
    return rtol, atol, None


@dataclass
class Allowance:
    """What one tensor was held to: per-element allowed error, and the words that say where it came from."""

    allowed: torch.Tensor  # float64, the tensor's shape
    reference_error: float  # max |dtype reference - exact| (0 when no exact answer was available)
    reduction: float  # REDUCTION_FACTOR x sqrt(K) x eps x max|exact| (0 for K <= 1 or no exact answer)
    inputs_per_output: float  # K
    rtol: float
    atol: float
    override: ToleranceOverride | None
    dtype: torch.dtype
    exact: bool  # held to a float64 answer (False: the float64 run was unavailable; held to the dtype reference)

    def floor_words(self) -> str:
        if self.override is not None:
            return self.override.describe()
        return f"{dtype_name(self.dtype)} default rtol={self.rtol:g} atol={self.atol:g}"

    def rule(self) -> str:
        """One line for the cell's detail: which rule judged this value."""
        if not self.exact:
            return f"{self.floor_words()} against the {dtype_name(self.dtype)} reference (no float64 answer)"
        reduction = (f", {self.reduction_words()} = {self.reduction:.3g}" if self.reduction else "")
        same = ("; the float64 run equals the dtype run at every element (exact in this dtype, or the reference "
                "computes in its own dtype whatever it is given)"
                if self.reference_error == 0 and self.dtype != torch.float64 and self.allowed.numel() > 1 else "")
        return (f"fp64 answer; max({self.floor_words()}, {FACTOR:g} x {dtype_name(self.dtype)} reference error "
                f"{self.reference_error:.3g}{reduction}){same}")

    def reduction_words(self) -> str:
        """A reduction's allowance in words: K is how many inputs there are per output element."""
        return f"{REDUCTION_FACTOR:g} x sqrt(K={self.inputs_per_output:.0f}) x eps x max|exact|"

    def at(self, flat_index: int, expected_abs: float) -> str:
        """`allowed X = why` at one element, for the mismatch message."""
        allowed = float(self.allowed.flatten()[flat_index])
        from_reference = FACTOR * self.reference_error
        floor = self.atol + self.rtol * expected_abs
        if self.exact and self.reduction >= max(from_reference, floor):
            why = self.reduction_words()
        elif self.exact and from_reference >= floor:
            why = f"{FACTOR:g} x {dtype_name(self.dtype)} reference error {self.reference_error:.2g}"
        else:
            why = self.floor_words()
        return f"allowed {allowed:.2g} = {why}"


def allowance(reference: torch.Tensor, exact: torch.Tensor | None, label: str,
              overrides: tuple[ToleranceOverride, ...] = (), inputs_per_output: float = 0.0) -> Allowance:
    """The allowed error per element of a result of `reference`'s dtype, held to `exact` (float64) when given;
    `inputs_per_output` (K) > 1 marks a reduction of about K terms per element."""
    rtol, atol, override = floor_for(reference.dtype, label, overrides)
    target = (exact if exact is not None else reference).double()
    floor = atol + rtol * target.abs()
    reference_error = reduction = 0.0
    if exact is not None:
        difference = (reference.double() - target).abs()
        finite = difference[torch.isfinite(difference)]
        reference_error = float(finite.max()) if finite.numel() else 0.0
        magnitudes = target.abs()[torch.isfinite(target)]
        if inputs_per_output > 1 and magnitudes.numel():
            reduction = (REDUCTION_FACTOR * accumulation_eps(reference.dtype) * float(magnitudes.max())
                         * inputs_per_output ** 0.5)
    allowed = torch.clamp(floor, min=max(FACTOR * reference_error, reduction))
    return Allowance(allowed=allowed, reference_error=reference_error, reduction=reduction,
                     inputs_per_output=inputs_per_output, rtol=rtol, atol=atol, override=override,
                     dtype=reference.dtype, exact=exact is not None)


LOWER_FLOATS = frozenset({torch.float32, torch.float16, torch.bfloat16})


class _KeepFloat64(torch.utils._python_dispatch.TorchDispatchMode):
    """Every operation asked for a lower floating dtype (`x.float()`, `.to(torch.bfloat16)`, `torch.zeros(...,
    dtype=torch.float32)`) gets float64 instead, so a reference that upcasts to fp32 on purpose, as norms' references
    do, still gives a float64 answer."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        if kwargs.get("dtype") in LOWER_FLOATS:
            kwargs["dtype"] = torch.float64
        return func(*args, **kwargs)


def float64_everywhere() -> Any:
    """A context in which the reference's own casts to a lower floating dtype stay in float64."""
    return _KeepFloat64()
