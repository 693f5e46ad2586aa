"""KernelSpec: a user kernel described as data, from which the harness derives every style.

A spec never wraps itself: it says how to launch its Triton kernels through a
`wrap` callable (identity for raw launches, `torch.library.wrap_triton` inside
a `triton_op`), and the harness decides what to wrap the launch in.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from harness.domain.machine import REQUIREMENTS
from harness.domain.tolerance import ToleranceOverride, override_problems

Launch = Callable[..., Any]
Wrap = Callable[[Any], Any]


def identity_wrap(kernel: Any) -> Any:
    """The `wrap` for raw launches: the kernel itself."""
    return kernel


class _SkippedLaunch:
    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return lambda *args, **kwargs: None

    def run(self, *args: Any, **kwargs: Any) -> None:
        """`kernel.run(..., grid=..., warmup=False)` launches too: skipped alike."""


def no_launch_wrap(kernel: Any) -> Any:
    """The `wrap` that allocates outputs but launches nothing: a launch under it is a fake impl.

    This mirrors what `triton_op` does under FakeTensorMode, so the harness derives
    a custom_op's `register_fake` from the spec's own launch instead of a hand-written one.
    """
    return _SkippedLaunch()


class InvalidSpecError(ValueError):
    """A KernelSpec whose fields are wrong; the message names the spec and every wrong field."""


@dataclass(frozen=True)
class KernelSpec:
    """One Triton kernel (or a small family of them) and everything needed to ask the matrix of it.

    name: identifier, used in cell ids and operator names (must be a valid Python identifier).
    kernels: the forward `@triton.jit` kernels (their names are looked for in Inductor's output).
    arguments: (name, type) of the op's arguments, in order: `torch.Tensor`, `float`, `int` or `bool`.
    launch: `launch(wrap, *args)` allocates outputs, launches `wrap(kernel)[grid](...)`, returns them.
    reference: the same computation in pure PyTorch (also the `native` control style).
    make_inputs: `make_inputs(size, device, generator)` returns the op's arguments; `size` scales dim 0.
    sizes: two sizes: the first for every pipeline, the second for the dynamic-shape pipelines.
    num_outputs: 1 for a Tensor, N > 1 for a tuple of N Tensors.
    backward: `backward(wrap, *saved, *grad_outputs)` returns one gradient per differentiable argument.
    save_for_backward: `save_for_backward(args, output)` returns the tensors `backward` receives as `saved`.
    backward_kernels: the `@triton.jit` kernels the backward launches.
    differentiable: names of the arguments that get gradients (default: every Tensor argument).
    flops: `flops(*argument_shapes)` returns the op's flop count (shapes for tensors, values for scalars).
    mutates_args: names of the arguments the kernel writes in place.
    dynamic_dims: for export_dynamic, argument name -> the dims that follow `size` (default: dim 0 of each tensor).
    features: Triton features the kernel uses (tags for the report).
    dtypes: the floating dtypes the kernel takes; `eager_inputs` casts the floating inputs to each (first: make_inputs's own).
    accepts_noncontiguous: True if the kernel computes right on strided views; False if it may refuse them
        (raise) instead. Either way a silently wrong result on a strided view is `wrong`.
    max_size: the largest `size` eager_inputs generates (default 4 x the largest of `sizes`).
    saved_intermediates: names of tensors the forward computes for the backward only (an RSTD, a mean): `launch`
        returns its outputs followed by these, `save_for_backward` sees that whole return as `output`, and every
        style hands the user the outputs alone (see `visible_output`).
    backward_scalars: names of float/int/bool arguments the backward receives, as keyword arguments.
    backward_mutates: parameters of the backward (`saved0`..., `grad0`...) it writes in place; the backward
        operator's schema declares them, so custom_op/triton_op tell compile and export the truth.
    dynamic_bounds: (min, max) of the dynamic size for export_dynamic and compile_dynamic (default: unbounded).
    perf_sizes: the sizes `harness perf` times, launch-bound first (default: sizes[0] and a size derived from
        the bytes the op moves; harness.perf.options).
    requires: what the kernel needs of the machine, each a name of harness.domain.pipelines.requirements
        (REQUIREMENTS: "gpu", "sm90", "fp8", "libdevice", "inline-asm"); a cell where one is missing is `skip`.
    tolerance: ToleranceOverride(rtol, atol, dtype=..., output=..., reason=...) entries replacing the dtype's
        default floor for a dtype and/or an output (docs/tolerance.md); each cell's detail names the rule used.
    fake: `fake(*args)`, a hand-written fake (meta) implementation with the op's arguments, that custom_op and
        triton_op register instead of the one derived from `launch` (docs/writing-kernel-specs.md). It allocates
        what `launch` returns (the outputs, then the saved intermediates) without launching; it is where a
        data-dependent size becomes `torch.library.get_ctx().new_dynamic_size()`.
    """

    name: str
    kernels: tuple[Any, ...]
    arguments: tuple[tuple[str, type], ...]
    launch: Launch
    reference: Callable[..., Any]
    make_inputs: Callable[[int, torch.device, torch.Generator], tuple[Any, ...]]
    sizes: tuple[int, int] = (1000, 1537)
    num_outputs: int = 1
    backward: Callable[..., Sequence[torch.Tensor]] | None = None
    save_for_backward: Callable[[tuple[Any, ...], Any], tuple[torch.Tensor, ...]] | None = None
    backward_kernels: tuple[Any, ...] = ()
    differentiable: tuple[str, ...] | None = None
    flops: Callable[..., int] | None = None
    mutates_args: tuple[str, ...] = ()
    dynamic_dims: dict[str, tuple[int, ...]] | None = None
    features: tuple[str, ...] = ()
    dtypes: tuple[torch.dtype, ...] = (torch.float32,)
    accepts_noncontiguous: bool = False
    max_size: int | None = None
    perf_sizes: tuple[int, ...] | None = None
    requires: tuple[str, ...] = ()
    tolerance: tuple[ToleranceOverride, ...] = ()
    description: str = ""
    source: str = field(default="", compare=False)  # the module the spec came from, set by the registry
    saved_intermediates: tuple[str, ...] = ()
    backward_scalars: tuple[str, ...] = ()
    backward_mutates: tuple[str, ...] = ()
    dynamic_bounds: tuple[int, int] | None = None
    fake: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        problems = spec_problems(self)
        if problems:
            raise InvalidSpecError(f"KernelSpec {self.name!r}: " + "; ".join(problems))

    @property
    def argument_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.arguments)

    @property
    def differentiable_names(self) -> tuple[str, ...]:
        if self.differentiable is not None:
            return self.differentiable
        return tuple(name for name, kind in self.arguments if kind is torch.Tensor)

    @property
    def has_backward(self) -> bool:
        return self.backward is not None

    def backward_scalar_values(self, args: tuple[Any, ...]) -> dict[str, Any]:
        """The scalar arguments the backward asked for, by name, taken from the forward's arguments."""
        return {name: args[self.argument_names.index(name)] for name in self.backward_scalars}


def visible_output(spec: KernelSpec, launched: Any) -> Any:
    """What the user sees of a launch's return: the outputs, without the intermediates saved for the backward."""
    if not spec.saved_intermediates:
        return launched
    values = tuple(launched)
    if spec.num_outputs == 1:
        return values[0]
    return values[: spec.num_outputs] if spec.num_outputs > 1 else None


def launched_count(spec: KernelSpec) -> int:
    """How many tensors a launch returns: its outputs, then its saved intermediates."""
    return spec.num_outputs + len(spec.saved_intermediates)


OWN_FAKE_TAG = "own-fake"


def kernel_header(spec: KernelSpec) -> dict[str, Any]:
    """What a results header records of a kernel; a spec with its own fake says so, in a key and a feature tag,
    so that a chart's reader knows custom_op/triton_op cells traced the library's fake, not the derived one."""
    features = list(spec.features)
    if spec.fake is not None and OWN_FAKE_TAG not in features:
        features.append(OWN_FAKE_TAG)
    entry: dict[str, Any] = {"features": features, "description": spec.description, "source": spec.source}
    if spec.fake is not None:
        entry["own_fake"] = True
    return entry


def kernel_name(kernel: Any) -> str:
    """The Python name of a `@triton.jit` kernel, through autotune/heuristics wrappers."""
    seen = kernel
    for _ in range(8):
        if hasattr(seen, "fn"):
            seen = seen.fn
        else:
            break
    return getattr(seen, "__name__", repr(kernel))


def spec_problems(spec: KernelSpec) -> list[str]:
    """Everything wrong with a spec, so a broken user spec fails with every missing piece named."""
    problems = []
    if not isinstance(spec.name, str) or not spec.name.isidentifier():
        problems.append("name must be a Python identifier")
    if not spec.kernels:
        problems.append("kernels is empty: name the @triton.jit kernels the launch uses")
    for label in ("launch", "reference", "make_inputs"):
        if not callable(getattr(spec, label)):
            problems.append(f"{label} must be callable")
    names = [name for name, _ in spec.arguments]
    if not names:
        problems.append("arguments is empty")
    for name, kind in spec.arguments:
        if kind not in (torch.Tensor, float, int, bool):
            problems.append(f"argument {name!r} has type {kind!r}; use torch.Tensor, float, int or bool")
    for name in spec.mutates_args:
        if name not in names:
            problems.append(f"mutates_args names {name!r}, which is not an argument")
    if (spec.backward is None) != (spec.save_for_backward is None):
        problems.append("backward and save_for_backward come together")
    if len(spec.sizes) != 2 or spec.sizes[0] == spec.sizes[1]:
        problems.append("sizes must be two different sizes")
    if not spec.dtypes or not all(isinstance(d, torch.dtype) and d.is_floating_point for d in spec.dtypes):
        problems.append("dtypes must name one or more floating torch dtypes")
    if spec.perf_sizes is not None and not all(isinstance(s, int) and s >= 1 for s in spec.perf_sizes):
        problems.append("perf_sizes must be whole numbers >= 1")
    if spec.max_size is not None and spec.max_size < 1:
        problems.append("max_size must be >= 1")
    for name in spec.requires:
        if name not in REQUIREMENTS:
            problems.append(f"requires names {name!r}; known: {', '.join(REQUIREMENTS)}")
    if spec.num_outputs < 0:
        problems.append("num_outputs must be >= 0")
    problems += real_kernel_problems(spec)
    problems += fake_problems(spec)
    problems.extend(override_problems(spec.tolerance))
    return problems


BACKWARD_PARAMETER = re.compile(r"(saved|grad)(\d+)")


def real_kernel_problems(spec: KernelSpec) -> list[str]:
    """The fields that let a library's kernel be written as it is (saved intermediates, scalars, bounds)."""
    problems = []
    names = [name for name, _ in spec.arguments]
    kinds = dict(spec.arguments)
    backward_only = ("saved_intermediates", "backward_scalars", "backward_mutates")
    for label in backward_only:
        if getattr(spec, label) and spec.backward is None:
            problems.append(f"{label} is for the backward, and the spec declares no backward")
    for name in spec.saved_intermediates:
        if not isinstance(name, str) or not name.isidentifier():
            problems.append(f"saved_intermediates names {name!r}, which is not a Python identifier")
        elif name in names:
            problems.append(f"saved_intermediates names {name!r}, which is an argument: intermediates are computed")
    if len(set(spec.saved_intermediates)) != len(spec.saved_intermediates):
        problems.append("saved_intermediates names an intermediate twice")
    for name in spec.backward_scalars:
        if name not in kinds:
            problems.append(f"backward_scalars names {name!r}, which is not an argument")
        elif kinds[name] not in (float, int, bool):
            problems.append(f"backward_scalars names {name!r}, a {getattr(kinds[name], '__name__', kinds[name])}:"
                            " only float, int and bool arguments (tensors reach the backward by save_for_backward)")
    grad_count = max(spec.num_outputs, 1)
    for name in spec.backward_mutates:
        match = BACKWARD_PARAMETER.fullmatch(name) if isinstance(name, str) else None
        if match is None:
            problems.append(f"backward_mutates names {name!r}; name the backward's parameters: saved0, saved1, ..., "
                            "grad0, grad1, ...")
        elif match.group(1) == "grad" and int(match.group(2)) >= grad_count:
            problems.append(f"backward_mutates names {name!r}, but the backward receives {grad_count} gradient(s)")
    if spec.dynamic_bounds is not None:
        problems += _bounds_problems(spec.dynamic_bounds, spec.sizes)
    return problems


def fake_problems(spec: KernelSpec) -> list[str]:
    """A hand-written fake must be callable with the op's arguments, as torch.library will call it."""
    if spec.fake is None:
        return []
    if not callable(spec.fake):
        return [f"fake must be callable (fake(*arguments), a fake/meta implementation) or None; got "
                f"{type(spec.fake).__name__}"]
    try:
        parameters = inspect.signature(spec.fake)
    except (TypeError, ValueError):  # a builtin without a signature: torch.library will tell at registration
        return []
    try:
        parameters.bind(*spec.argument_names)
    except TypeError:
        return [f"fake{parameters} cannot take the op's {len(spec.arguments)} argument(s) "
                f"({', '.join(spec.argument_names)}): give it the same parameters as the op"]
    return []


def _bounds_problems(bounds: Any, sizes: tuple[int, int]) -> list[str]:
    if (not isinstance(bounds, tuple) or len(bounds) != 2
            or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)):
        return ["dynamic_bounds must be a (min, max) pair of ints"]
    low, high = bounds
    if low < 2 or high <= low:
        return [f"dynamic_bounds {bounds} must have 2 <= min < max (torch specializes sizes 0 and 1)"]
    outside = [size for size in sizes if not low <= size <= high]
    if outside:
        return [f"dynamic_bounds {bounds} leave out sizes {outside}: both sizes run in the dynamic pipelines"]
    return []
