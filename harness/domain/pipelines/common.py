"""What every pipeline shares: the cell's context, stage tracking, and the reference check."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from harness.domain.checking import assert_matches
from harness.domain.spec import KernelSpec
from harness.domain.styles import BuiltOp, SkipCell

__all__ = ["CellContext", "StageFailure", "SkipCell", "staged", "check_call", "clone_args"]


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
    # timeout_s) -> a record with returncode, output and how; given by the run layer (harness.run.fresh_python).
    fresh_python: Callable[[str, list[str], Path, float], Any] | None = None

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
            raise StageFailure(stage, exc) from exc


def clone_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args)


def mutated_args(context: CellContext, args: tuple[Any, ...]) -> tuple[Any, ...]:
    names = context.spec.argument_names
    return tuple(args[names.index(name)] for name in context.spec.mutates_args)


def expected_result(context: CellContext, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """The reference's output and the state of the arguments it mutates, computed on copies."""
    copies = clone_args(args)
    with torch.no_grad():
        output = context.spec.reference(*copies)
    return output, mutated_args(context, copies)


def check_call(context: CellContext, call: Callable[..., Any], args: tuple[Any, ...], run_stage: str = "run") -> Any:
    """Run `call(*args)` in `run_stage`, then check its output and mutations against the reference."""
    expected_output, expected_mutations = expected_result(context, args)
    with staged(run_stage, context):
        output = call(*args)
        context.synchronize()
    check_result(context, output, args, expected_output, expected_mutations)
    return output


def check_result(
    context: CellContext, output: Any, args: tuple[Any, ...], expected_output: Any, expected_mutations: tuple[Any, ...]
) -> None:
    with staged("check", context):
        if context.spec.num_outputs > 0:
            assert_matches(output, expected_output)
        if context.spec.mutates_args:
            assert_matches(mutated_args(context, args), expected_mutations, what="mutated arguments")
