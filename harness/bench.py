"""`python -m harness bench`: the same cells under each isolation mode and worker count, timed in one run.

Each (mode, workers) pair is one `python -m harness run` into its own results file in the
output folder. With `--gpus 1,2` each pair also runs once per GPU count, seeing only the first N
GPUs (CUDA_VISIBLE_DEVICES), and a column compares each row with its mode's first row: the
scaling from one GPU to several, measured in the same bench. For each run the table gives the
wall time, the CPU time of the run and every process it waited for (getrusage RUSAGE_CHILDREN:
xdist workers, forked cells, cell interpreters), the speed-up over process-per-cell at the same
worker count, and whether every cell's outcome equals process-per-cell's (the cells that differ
are named). Ratios only compare rows of one bench.
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.cli_common import CliError, cli_errors, load_tier_and_specs, refuse_existing, selected
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.results import ResultsFileError, read_results
from harness.run.environment import describe
from harness.run.gpus import visible_gpus
from harness.run.options import ISOLATION_MODES, RUN_OPTIONS, add_cli_options, cli_arguments
from harness.run.selection import select_cells
from harness.run.shard import ShardError, load_durations, parse_shard, shard_cells
from harness.vocab import PIPELINES, STYLES

REFERENCE_MODE = "process"
DEFAULT_KERNELS = ["add"]
DEFAULT_PIPELINES = ["eager", "compile_fullgraph", "export_nonstrict"]  # eager, a compile, an export: a few minutes on 2 cores
DIFFERENCES_SHOWN = 8


@dataclass
class BenchRun:
    mode: str
    workers: str
    results: Path
    wall_s: float
    cpu_s: float
    exit_code: int
    outcomes: dict[str, str] = field(default_factory=dict)  # cell id -> outcome; empty when no results file could be read
    gpus: int | None = None  # how many GPUs the run could see (--gpus), None when not restricted


ORDER_NOTE = "; every run starts the longest groups first, by the durations in `{}`"
SHARD_NOTE = ", shard {} of them (`--shard`: whole kernel-pipeline groups, {})"


def add_bench_parser(subparsers: Any) -> None:
    bench = subparsers.add_parser("bench", help="time the same cells under each isolation mode and worker count; "
                                  f"default cells: {','.join(DEFAULT_KERNELS)} x every style x {','.join(DEFAULT_PIPELINES)}")
    add_cli_options(bench, [option for option in RUN_OPTIONS if option.in_bench])  # as `run` declares them
    bench.add_argument("--modes", default="worker,process", help="isolation modes, comma-separated")
    bench.add_argument("--workers", default="1", help="worker counts, comma-separated (e.g. 1,2)")
    bench.add_argument("--gpus", default=None,
                       help="GPU counts, comma-separated (e.g. 1,2): each run sees only the first N GPUs (GPU tier)")
    bench.add_argument("--out-dir", default=None, help="folder for each run's results (default .matrix-results/bench-<time>)")
    bench.add_argument("-o", "--output", default=None, help="the Markdown table (default OUT_DIR/bench.md)")
    bench.add_argument("--overwrite", action="store_true", help="replace existing results and table")
    bench.set_defaults(handler=command_bench)


def _shard_note(context: dict[str, Any]) -> str:
    """Which slice of the selection the cell count is, and how the slice was balanced."""
    if not context.get("shard"):
        return ""
    how = f"balanced by the durations in `{context['durations_from']}`" if context.get("durations_from") else "round robin"
    return SHARD_NOTE.format(context["shard"], how)


def _split(values: str) -> list[str]:
    return [value.strip() for value in values.split(",") if value.strip()]


def command_bench(args: argparse.Namespace) -> int:
    loaded = load_tier_and_specs(args)
    kernels, styles, pipelines = _selection(args, loaded["specs"])
    modes, workers = _modes(args.modes), _counts(args.workers, "--workers", "worker")
    with cli_errors(ShardError):  # one clear error before anything runs, not one per run
        durations = load_durations(args.durations_from) if args.durations_from else None
        shard = parse_shard(args.shard) if args.shard else None
    environment = describe(loaded["tier"])
    gpu_counts, visible = _gpu_counts(args.gpus, environment)
    out_dir = Path(args.out_dir or Path(".matrix-results") / f"bench-{datetime.datetime.now():%Y%m%d-%H%M%S}")
    output = Path(args.output) if args.output else out_dir / "bench.md"
    plan = [(mode, count, gpus, out_dir / f"{mode}-n{count}{f'-g{gpus}' if gpus else ''}.jsonl")
            for gpus in gpu_counts for count in workers for mode in modes]
    refuse_existing([output] + [results for *_, results in plan], args.overwrite, "--out-dir/--output")
    _make_folders(out_dir, output.parent)
    cells = shard_cells(select_cells(kernels, styles, pipelines), shard, durations)
    if not cells:
        raise CliError(f"--shard {shard}: no cells in this shard of the selection")
    selection = cli_arguments(vars(args) | {"tier": loaded["tier"], "kernel": kernels, "style": styles,
                                            "pipeline": pipelines}, [option for option in RUN_OPTIONS if option.in_bench])
    context = {"environment": environment, "cells": len(cells), "kernels": kernels, "styles": styles,
               "pipelines": pipelines, "load_at_start": os.getloadavg()[0], "cold_cache": args.cold_cache,
               "durations_from": args.durations_from, "shard": str(shard) if shard else None}
    runs = _run_plan(plan, selection, visible, len(cells), out_dir)
    table = render_bench(runs, context | {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M")})
    with cli_errors(OSError):
        write_text_atomic(output, table)
    print(table)
    print(f"bench table: {output}")
    return 0 if all(run.outcomes for run in runs) else 1


def _selection(args: argparse.Namespace, specs: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The kernels, styles and pipelines asked, each checked; bench's own defaults where none are asked."""
    kernels = selected("kernel", args.kernel or DEFAULT_KERNELS, specs)
    styles = selected("style", args.style, STYLES)
    pipelines = list(PIPELINES) if args.all else selected("pipeline", args.pipeline or DEFAULT_PIPELINES, PIPELINES)
    return kernels, styles, pipelines


def _modes(value: str) -> list[str]:
    modes = _split(value)
    unknown = [mode for mode in modes if mode not in ISOLATION_MODES]
    if unknown or not modes:
        named = repr(unknown[0]) if unknown else "(none)"
        raise CliError(f"--modes: unknown isolation mode {named}; valid modes: {', '.join(ISOLATION_MODES)}")
    return modes


def _make_folders(*folders: Path) -> None:
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"{folder}: cannot create the output folder ({exc.strerror})") from None


def _run_plan(plan: list[tuple[str, str, int | None, Path]], selection: list[str], visible: list[str], cells: int,
              out_dir: Path) -> list[BenchRun]:
    """Each (mode, workers, GPUs) of the plan as one `harness run`, one after another, with a line for each."""
    names = [f"{m} -n {c}{f' on {g} GPU(s)' if g else ''}" for m, c, g, _ in plan]
    print(f"bench: {cells} cells x {len(plan)} runs ({', '.join(names)}) into {out_dir}")
    runs = []
    for (mode, count, gpus, results), name in zip(plan, names):
        run = run_once(mode, count, results, selection, visible[:gpus] if gpus else None)
        print(f"  {name}: {run.wall_s:.1f} s wall, {run.cpu_s:.1f} s CPU, {len(run.outcomes)} cells, exit {run.exit_code}")
        runs.append(run)
    return runs


def _counts(value: str, option: str, what: str) -> list[str]:
    """A comma-separated list of whole numbers >= 1, or CliError naming the option."""
    counts = _split(value)
    if not counts or not all(count.isdigit() and int(count) >= 1 for count in counts):
        raise CliError(f"{option} {value!r}: give {what} counts >= 1, comma-separated (e.g. 1,2)")
    return counts


def _gpu_counts(value: str | None, environment: dict[str, Any]) -> tuple[list[int | None], list[str]]:
    """The --gpus counts (or [None] when not given) and the GPUs CUDA may use here; CliError when they cannot run."""
    if value is None:
        return [None], []
    counts = _counts(value, "--gpus", "GPU")
    visible = visible_gpus(os.environ, int(environment.get("gpu_count") or 0)) if environment.get("tier") == "gpu" else []
    if max(int(count) for count in counts) > len(visible):
        raise CliError(f"--gpus {value}: this run sees {len(visible)} GPU(s) (tier {environment.get('tier')})")
    return [int(count) for count in counts], visible


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(mode: str, workers: str, results: Path, selection: list[str], gpus: list[str] | None = None) -> BenchRun:
    """One `python -m harness run` of the cells, seeing only `gpus` when given; its output goes to RESULTS.log."""
    command = [sys.executable, "-m", "harness", "run", *selection, "--isolation", mode, "-n", workers,
               "-o", str(results), "--summary", str(results.with_suffix(".md")), "--overwrite"]
    cpu_before, started = _cpu_seconds(), time.perf_counter()
    with open(results.with_suffix(".log"), "w") as log:
        environ = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(gpus)} if gpus else None
        exit_code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=environ).returncode
    wall, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_before
    try:
        outcomes = {cell.id: cell.outcome for cell in read_results(results).cells}
    except ResultsFileError:
        outcomes = {}
    return BenchRun(mode, workers, results, round(wall, 2), round(cpu, 2), exit_code, outcomes,
                    len(gpus) if gpus else None)


def differences(run: BenchRun, reference: BenchRun) -> list[str]:
    """Cells whose outcome differs from the reference run's, each as `id (process: its outcome, here: this one)`."""
    ids = sorted(set(run.outcomes) | set(reference.outcomes))
    return [f"{cell} ({reference.mode}: {reference.outcomes.get(cell, 'missing')}, here: {run.outcomes.get(cell, 'missing')})"
            for cell in ids if run.outcomes.get(cell) != reference.outcomes.get(cell)]


def _reference_for(run: BenchRun, runs: list[BenchRun]) -> BenchRun | None:
    return next((other for other in runs
                 if other.mode == REFERENCE_MODE and other.workers == run.workers and other.gpus == run.gpus), None)


def _ratio(reference: float, value: float) -> str:
    return f"{reference / value:.2f}x" if value > 0 else "n/a"


def _same_outcomes(run: BenchRun, reference: BenchRun | None) -> str:
    if not run.outcomes:
        return f"no results (exit {run.exit_code})"
    if reference is None or not reference.outcomes:
        return "n/a (no process run)"
    differing = differences(run, reference)
    if not differing:
        return "identical"
    shown = ", ".join(differing[:DIFFERENCES_SHOWN])
    more = f", and {len(differing) - DIFFERENCES_SHOWN} more" if len(differing) > DIFFERENCES_SHOWN else ""
    return f"{len(differing)} differ: {shown}{more}"


def render_bench(runs: list[BenchRun], context: dict[str, Any]) -> str:
    """The Markdown table, with the machine and the cell set it was measured on."""
    environment = context["environment"]
    gpu = f"{environment['gpu']} x{environment.get('gpu_count') or 1}" if environment.get("gpu") else "none"
    by_gpus = any(run.gpus is not None for run in runs)
    rows = []
    for run in runs:
        reference = _reference_for(run, runs)
        usable = reference is not None and reference.outcomes and run.outcomes
        row = [run.mode, run.workers, str(len(run.outcomes)), f"{run.wall_s:.1f}", f"{run.cpu_s:.1f}",
               _ratio(reference.wall_s, run.wall_s) if usable and reference else "n/a",
               _ratio(reference.cpu_s, run.cpu_s) if usable and reference else "n/a",
               escape_cell(_same_outcomes(run, reference), limit=2000)]
        if by_gpus:
            first = next(other for other in runs if other.mode == run.mode)
            row[2:2] = [str(run.gpus), _ratio(first.wall_s, run.wall_s) if first.outcomes and run.outcomes else "n/a"]
        rows.append(row)
    headers = ["isolation", "workers", "cells", "wall (s)", "CPU (s)", "speed-up, wall", "speed-up, CPU", "outcomes vs process"]
    if by_gpus:
        headers[2:2] = ["GPUs", "wall vs its mode's first row"]
    lines = [
        "# Isolation benchmark",
        "",
        f"Machine: {environment.get('cpu_count')} CPU cores, GPU: {gpu}; tier {environment.get('tier')}, "
        f"torch {environment.get('torch')}, triton {environment.get('triton')}, Python {environment.get('python')}; "
        f"load average {context['load_at_start']:.2f} at the start; {context['date']}.",
        "",
        f"Cells: {context['cells']} ({', '.join(context['kernels'])} x {', '.join(context['styles'])} x "
        f"{', '.join(context['pipelines'])}){_shard_note(context)}"
        f"{', each with empty caches (--cold-cache)' if context.get('cold_cache') else ''}"
        "; xdist workers are forked from the run's zygote in worker isolation and are new Pythons in process isolation"
        f"{ORDER_NOTE.format(context['durations_from']) if context.get('durations_from') else ''}. "
        "Each row is one `python -m harness run` of those cells, all rows in one bench, in this order.",
        "",
        markdown_table(headers, rows),
        "",
        "Wall: elapsed time of the run, startup included. CPU: user + system time of the run and of every process "
        "it waited for. Speed-up: process-per-cell's time at the same worker count (and GPU count) divided by this row's. "
        "Outcomes: each cell's outcome against process-per-cell's at the same worker count"
        + (" and GPU count. Wall vs its mode's first row: that row's wall time divided by this row's (the scaling "
           "from the fewest GPUs and workers)." if by_gpus else "."),
        "",
    ]
    return "\n".join(lines)
