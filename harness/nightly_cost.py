"""`harness nightly-cost RESULTS`: what one night of the nightly GPU workflow costs on N runners, from a measured run.

Each torch build's cells are cut into N shards exactly as `harness run --shard I/N --durations-from RESULTS` cuts them
(harness.run.shard), one per runner. A shard's cells take their summed `duration_s` spread over as many cells at a
time as the measured run kept running on average (its cell-seconds over its first-to-last-cell span, on the machine
its header names), and never less than its heaviest cell group, whose cells one worker runs one after another. Each
shard job adds a fixed start-up (`--startup-s`: a run's wall time less its cells' span, measured in
docs/benchmarks.md). The builds queue on the same N runners, so each runner runs one shard of every build in turn.
Left out, because the run measures neither: installing torch on the runner, and confirming the cells that changed.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from harness.results import CellResult, ResultsFile, ResultsFileError, read_results, weighed_durations
from harness.run.selection import Cell
from harness.run.shard import assign_groups


@dataclass(frozen=True)
class ShardCost:
    """One shard of one build: its cells' seconds, its heaviest group's, and its job's wall time."""

    cell_seconds: float
    heaviest_group: str
    heaviest_group_s: float
    wall_s: float


def cell_of(result: CellResult) -> Cell:
    """The run's Cell for a record, so that its group (and so its shard) is the one `--shard` gives it."""
    style = f"{result.style}@{result.call_site}" if result.call_site else result.style
    return Cell(result.kernel, style, result.pipeline)


def cells_at_a_time(results: ResultsFile) -> float:
    """The measured run's mean number of cells running: its cells' seconds over its first start to its last end."""
    timed = [(float(c.detail["started_at"]), float(c.duration_s or 0.0)) for c in results.cells
             if isinstance(c.detail.get("started_at"), (int, float))]
    if not timed:
        raise ResultsFileError("no cell records detail.started_at: the run's concurrency cannot be measured")
    span = max(start + seconds for start, seconds in timed) - min(start for start, _ in timed)
    return sum(seconds for _, seconds in timed) / span


def shard_costs(results: ResultsFile, runners: int, startup_s: float) -> list[ShardCost]:
    """Each of `runners` shards of the run's cells, as `--shard I/N --durations-from` assigns them."""
    cells = {result.id: result for result in results.cells}  # the last record of a cell counts
    runs = {cell_id: cell_of(result) for cell_id, result in cells.items()}
    assignment = assign_groups(list(runs.values()), runners, weighed_durations(results))
    concurrency = cells_at_a_time(results)
    loads = [0.0] * runners
    groups: list[dict[str, float]] = [{} for _ in range(runners)]
    for cell_id, result in cells.items():
        shard, group = assignment[runs[cell_id].group], runs[cell_id].group
        loads[shard] += result.duration_s or 0.0
        groups[shard][group] = groups[shard].get(group, 0.0) + (result.duration_s or 0.0)
    costs = []
    for load, weights in zip(loads, groups):
        heaviest = max(weights, key=lambda name: (weights[name], name), default="")
        seconds = weights.get(heaviest, 0.0)
        costs.append(ShardCost(load, heaviest, seconds, startup_s + max(load / concurrency, seconds)))
    return costs


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def render_cost(results: ResultsFile, source: str, runners: list[int], builds: int, startup_s: float) -> str:
    """The Markdown: one row per runner count."""
    env = results.environment
    rows = []
    for count in runners:
        costs = shard_costs(results, count, startup_s)
        slowest = max(costs, key=lambda cost: cost.wall_s)
        rows.append([count, f"{slowest.cell_seconds:,.0f}", minutes(slowest.wall_s), minutes(builds * slowest.wall_s),
                     f"{builds * sum(cost.wall_s for cost in costs) / 3600:.2f} h"])
    headers = ["runners", "slowest shard: cell-seconds", "slowest shard job", f"the night ({builds} builds)",
               f"runner time ({builds} builds)"]
    total = sum(c.duration_s or 0.0 for c in results.cells)
    longest = shard_costs(results, 1, startup_s)[0]  # one shard holds every group
    return "\n".join([
        f"# One night on N runners: {source}",
        "",
        f"Measured: {len(results.cells):,} cells, {total:,.0f} cell-seconds, {cells_at_a_time(results):.1f} cells at a time "
        f"on average, on {env.get('gpu') or 'no GPU'} ({env.get('cpu_count', '?')} cores), torch {env.get('torch')}, "
        f"triton {env.get('triton')}. Each shard job adds {startup_s:g} s of start-up; each runner runs one shard of each "
        f"of the {builds} builds in turn, so the night takes {builds} times the slowest shard job. Not included: "
        "installing torch on a runner, and confirming the cells that changed. No shard is shorter than the heaviest "
        f"cell group, `{longest.heaviest_group}` ({longest.heaviest_group_s:.0f} cell-seconds, one worker's).",
        "",
        tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True),
        "",
    ])


def command_nightly_cost(args: argparse.Namespace) -> int:
    try:
        runners = [int(part) for part in args.runners.split(",")]
        if not runners or min(runners) < 1 or args.builds < 1 or args.startup_s < 0:
            raise ValueError
    except ValueError:
        print(f"error: --runners {args.runners!r}, --builds {args.builds}, --startup-s {args.startup_s}: expected "
              "whole numbers of 1 or more (e.g. 1,2,4,8), and seconds of 0 or more", file=sys.stderr)
        return 2
    try:
        results = read_results(args.results)
        text = render_cost(results, args.results, runners, args.builds, args.startup_s)
    except (OSError, ResultsFileError) as exc:
        print(f"error: {args.results}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("nightly-cost", help="what one night of the nightly GPU workflow takes on N runners, "
                                   "from a measured run's cell durations")
    parser.add_argument("results", help="the measured run (e.g. reports/gpu-results.jsonl)")
    parser.add_argument("--runners", default="1,2,4,8", help="runner counts, one row each (default 1,2,4,8)")
    parser.add_argument("--builds", type=int, default=2, help="torch builds per night (default 2: stable and nightly)")
    parser.add_argument("--startup-s", type=float, required=True,
                        help="each shard job's fixed start-up: a run's wall time less its cells' span (docs/benchmarks.md)")
    parser.set_defaults(handler=command_nightly_cost)
