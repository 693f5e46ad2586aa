"""What a `run` will do, decided before it starts: which cells (after --shard and --resume), into which file.

The pytest plugin makes the same decision in every worker from the same options
(`MatrixState.planned`); this side needs it to pass those options on, to know which
cells the finished file must hold, and to say how far an interrupted run got.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.results import ResultsFileError, read_results
from harness.run.earlier import cell_keys, check_resumable, repair_torn_tail, resume_command, reused_cells
from harness.run.repeat import parse_repeat
from harness.run.selection import Cell
from harness.run.shard import Shard, load_durations, parse_shard, shard_cells


class PlanError(ValueError):
    """Options that contradict each other; the message is one line."""


@dataclass
class RunPlan:
    asked: list[Cell]  # the selection after --shard: every one must be in the file when the run ends
    to_run: list[Cell]  # asked, less the cells a --resume file already holds
    output: Path
    resume: bool = False
    shard: Shard | None = None
    reused: int = 0  # cells copied from a --reuse file, not run (harness.run.earlier.cells)

    def done(self) -> int:
        """How many asked cells the results file holds now (0 when it is missing or unreadable)."""
        try:
            held = {cell.id for cell in read_results(self.output).cells}
        except ResultsFileError:
            return 0
        return sum(cell.id in held for cell in self.asked)


def plan_run(args: argparse.Namespace, selection: list[Cell], environment: dict[str, Any], default_output: Path) -> RunPlan:
    """Raises ShardError, ResumeError, RepeatError or PlanError (all ValueError) on bad options."""
    shard = parse_shard(args.shard) if args.shard else None
    durations = load_durations(args.durations_from) if args.durations_from else None
    asked = shard_cells(selection, shard, durations)
    if shard:
        balance = f"balanced by the durations in {args.durations_from}" if durations is not None else "round robin"
        print(f"shard {shard}: {len(asked)} of {len(selection)} selected cells ({balance})")
    if durations is not None:
        print(f"order: longest cell groups first, by the durations in {args.durations_from}")
    parse_repeat(args.repeat)  # one clear error before anything runs
    if not args.resume:
        output = Path(args.output or default_output)
        return RunPlan(asked, list(asked), output, shard=shard)
    output = Path(args.resume)
    if args.output and Path(args.output).resolve() != output.resolve():
        raise PlanError(f"--resume {output} appends to that file; -o/--output names another ({args.output})")
    if args.overwrite:
        raise PlanError("--resume appends to its results file; --overwrite would replace it: choose one")
    done = {cell.id for cell in check_resumable(output, environment).cells}  # checked before the file is touched
    cut = repair_torn_tail(output)  # the reading above already dropped that line: the cells are the same
    if cut:
        print(f"resume: cut {cut} bytes of a torn last line from {output} (a write the stop interrupted)")
    to_run = [cell for cell in asked if cell.id not in done]
    print(f"resume: {len(asked) - len(to_run)} of {len(asked)} cells already in {output}; running {len(to_run)}")
    return RunPlan(asked, to_run, output, resume=True, shard=shard)


def apply_reuse(plan: RunPlan, reuse: str, specs: dict[str, Any], run: dict[str, Any]) -> None:
    """Leave out of `to_run` the cells --reuse copies (the plugin copies them: harness.plugin.state); ReuseError."""
    if plan.resume:
        raise PlanError("--resume finishes a file and --reuse starts a new one from an earlier run: choose one")
    reused, line = reused_cells(reuse, cell_keys(specs, plan.to_run, run), run)
    print(line)
    plan.reused = len(reused)
    plan.to_run = [cell for cell in plan.to_run if cell.id not in reused]


def interrupted_message(plan: RunPlan, command: list[str]) -> str:
    """One line: how far the run got and the command that finishes it."""
    done = plan.done()
    if not plan.output.exists():
        return f"interrupted: 0 of {len(plan.asked)} cells done, nothing written; run again with: {shlex.join(command)}"
    return f"interrupted: {done} of {len(plan.asked)} cells done; resume with: {resume_command(command, plan.output)}"


def command_line() -> list[str]:
    """How this run was started, as a person would type it."""
    program = Path(sys.argv[0])
    if program.name == "__main__.py":
        return ["python", "-m", program.parent.name] + sys.argv[1:]
    return [program.name] + sys.argv[1:]
