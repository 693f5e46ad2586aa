"""What every pipeline shares: the cell's context, stage tracking, and the reference check."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from harness.domain.checking import assert_close
from harness.domain.fresh_run import FreshRun
from harness.domain.poison import poison_before_run
from harness.domain.spec import KernelSpec
from harness.domain.styles import BuiltOp, SkipCell
from harness.domain.tolerance import float64_everywhere

__all__ = ["CellContext", "FreshRun", "StageFailure", "SkipCell", "staged", "check_call", "clone_args"]


class StageFailure(Exception):
    """An exception caught in a named stage (trace, compile, load, run, check)."""

    def __init__(self, stage: str, error: BaseException, prefix: str = "", detail: dict[str, Any] | None = None) -> None:
        super().__init__(f"{stage}: {prefix}{type(error).__name__}: {error}")
        self.stage = stage
        self.error = error
        self.prefix = prefix  # put before the error's first line, e.g. the failing generated input
        self.detail = detail or {}


@dataclass
class CellContext:
    spec: KernelSpec
    built: BuiltOp
    device: torch.device
    tier: str
    workdir: Path
    seed: int = 0
    stage_marker: Callable[[str], None] | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)  # time spent in each stage, for `detail.stage_s`
    stage_depth: int = 0  # how many timed stages are open; only the outermost one is timed
    # Runs `python -m MODULE ARGV` in a process that never imported the kernel's module: (module, argv, log,
    # timeout_s) -> a record with returncode, output and how; given by the run layer (harness.run.startup.fresh_python).
    fresh_python: Callable[[str, list[str], Path, float], Any] | None = None
    judged: dict[str, str] = field(default_factory=dict)  # checked value -> the tolerance rule that judged it
    # (kind, program, args, build) -> the path of the worker's artifact built from the same program, else build()'s;
    # given by the run where cells share a worker (harness.domain.pipelines.artifacts); None: build every one.
    fetch_artifact: Callable[[str, Any, Any, Callable[[], Path]], Path] | None = None
    reused: dict[str, str] = field(default_factory=dict)  # artifact kind -> the cell that built the one this cell loaded

    def assert_close(self, actual: Any, expected: Any, exact: Any | None, what: str = "output",
                     inputs_numel: int = 0) -> None:
        """The one value check of every pipeline (harness.domain.tolerance), with the spec's overrides;
        `inputs_numel` (the largest floating input's numel) sizes a reduction's allowance."""
        assert_close(actual, expected, exact, what=what, overrides=self.spec.tolerance, judged=self.judged,
                     inputs_numel=inputs_numel)

    def inputs(self, size: int | None = None, device: torch.device | None = None) -> tuple[Any, ...]:
        """Fresh inputs; the same seed gives the same values for every style, so styles face one question."""
        generator = torch.Generator().manual_seed(self.seed)
        return self.spec.make_inputs(size or self.spec.sizes[0], device or self.device, generator)

    def synchronize(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def require_operator(self, pipeline: str) -> None:
        if self.built.overload is None:
            raise SkipCell(f"{pipeline} asks torch.library operators; this style makes none")


@contextlib.contextmanager
def stage_clock(context: CellContext | None, stage: str) -> Iterator[None]:
    """Add the time inside to `context.stage_seconds[stage]`; a stage inside another is part of the outer one,
    and a StageFailure coming out charges the time to the stage it names."""
    if context is None:
        yield
        return
    outermost = context.stage_depth == 0
    context.stage_depth += 1
    started, charged = time.perf_counter(), stage
    try:
        yield
    except StageFailure as failure:
        charged = failure.stage
        raise
    finally:
        context.stage_depth -= 1
        if outermost:
            spent = context.stage_seconds.get(charged, 0.0) + time.perf_counter() - started
            context.stage_seconds[charged] = round(spent, 3)


@contextlib.contextmanager
def staged(stage: str, context: CellContext | None = None) -> Iterator[None]:
    """Attribute any exception inside to `stage`, tell the parent where we are in case we die here, and time it."""
    if context is not None and context.stage_marker is not None:
        context.stage_marker(stage)
    with stage_clock(context, stage):
        try:
            yield
        except (StageFailure, SkipCell):
            raise
        except Exception as exc:
            detail = getattr(exc, "cell_detail", None)  # evidence an exception carries for the cell's detail
            raise StageFailure(stage, exc, detail=detail if isinstance(detail, dict) else None) from exc


def clone_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args)


def mutated_args(context: CellContext, args: tuple[Any, ...]) -> tuple[Any, ...]:
    names = context.spec.argument_names
    return tuple(args[names.index(name)] for name in context.spec.mutates_args)


@dataclass
class Expected:
    """The reference's answer for one call: in the inputs' dtype, and in float64 (None where that run failed)."""

    output: Any
    mutations: tuple[Any, ...]
    exact_output: Any | None = None
    exact_mutations: tuple[Any, ...] | None = None
    exact_failure: str | None = None  # why there is no float64 answer
    inputs_numel: int = 0  # the largest floating input's numel: how many inputs may feed one output


def largest_input(args: Any) -> int:
    """The numel of the largest floating tensor among `args` (0 when none)."""
    return max((a.numel() for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()), default=0)


def widen(value: Any, device: torch.device | None = None) -> Any:
    """A floating tensor as float64 (on `device` when given), anything else as is."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().to(device=device or value.device, dtype=torch.float64)
    return value


def exact_device(args: tuple[Any, ...]) -> torch.device | None:
    """Where float64 runs: the inputs' device, or the CPU where the device has no float64 (MPS)."""
    devices = {a.device.type for a in args if isinstance(a, torch.Tensor)}
    return torch.device("cpu") if "mps" in devices else None


def _reference_run(context: CellContext, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    copies = clone_args(args)
    with torch.no_grad():
        output = context.spec.reference(*copies)
    return output, mutated_args(context, copies)


def expected_result(context: CellContext, args: tuple[Any, ...]) -> Expected:
    """The reference's output and the state of the arguments it mutates, computed on copies, in the
    inputs' dtype and again in float64 (the exact answer of the tolerance model).

    Every pipeline asks it just before it runs the op, so it ends by poisoning the memory the reference freed
    (harness.domain.poison): an output the op never writes cannot hold the reference's answer."""
    output, mutations = _reference_run(context, args)
    expected = Expected(output, mutations, inputs_numel=largest_input(args))
    wide_device = exact_device(args)
    try:
        with float64_everywhere():
            expected.exact_output, expected.exact_mutations = _reference_run(
                context, tuple(widen(a, wide_device) for a in args))
    except Exception as exc:  # a reference that only runs in its own dtype: judged against that dtype's run
        expected.exact_failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    poison_before_run(context.device, output)
    return expected


def check_call(context: CellContext, call: Callable[..., Any], args: tuple[Any, ...], run_stage: str = "run") -> Any:
    """Run `call(*args)` in `run_stage`, then check its output and mutations against the reference."""
    expected = expected_result(context, args)
    with staged(run_stage, context):
        output = call(*args)
        context.synchronize()
    check_result(context, output, args, expected)
    return output


def check_result(context: CellContext, output: Any, args: tuple[Any, ...], expected: Expected) -> None:
    with staged("check", context):
        if context.spec.num_outputs > 0:
            context.assert_close(output, expected.output, expected.exact_output, inputs_numel=expected.inputs_numel)
        if context.spec.mutates_args:
            context.assert_close(mutated_args(context, args), expected.mutations, expected.exact_mutations,
                                 what="mutated arguments", inputs_numel=expected.inputs_numel)


def built_artifact(context: CellContext, kind: str, program: Any, args: Any, build: Callable[[], Path]) -> Path:
    """The package or saved file of this program: the worker's own build of the same program where the run shares
    them, else `build()` (harness.domain.pipelines.artifacts)."""
    if context.fetch_artifact is None:
        return build()
    return context.fetch_artifact(kind, program, args, build)
