"""`python -m harness order-check`: the same cells in two orders in one worker; an outcome that differs is an
order dependence (a cell's verdict must not depend on which cells ran before it in its worker).

Two runs of `python -m harness run -n 1`: the default order (longest groups first) and the same order reversed,
so every pair of cells meets in both orders. A sample of the selected kernels keeps it short; `--sample 0` takes
them all. Neither run is confirmed nor compared with a baseline: the question is only whether the two agree.
"""

from __future__ import annotations

import argparse
import datetime
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.cli_common import CliError, load_tier_and_specs
from harness.report.markdown.aggregate import final_cells
from harness.results import ResultsFileError, read_results
from harness.run.options import RUN_OPTIONS, add_cli_options, cli_arguments
from harness.run.selection import SelectionError, validate

ORDERS = ("longest-first", "reversed")
SELECTION = ("kernel", "style", "pipeline", "all", "kernels_from", "tier", "timeout")
DEFAULT_SAMPLE = 4


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("order-check", help="run a sample of cells in two orders in one worker; exit 1 if "
                                   "any outcome differs")
    add_cli_options(parser, [option for option in RUN_OPTIONS if option.dest in SELECTION])
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE,
                        help=f"how many of the selected kernels to run, drawn with --seed (default {DEFAULT_SAMPLE}; 0: all)")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the kernel sample (default 0)")
    parser.add_argument("--out-dir", default=None, help="folder for the two runs' files (default .matrix-results/order-<time>)")
    parser.set_defaults(handler=command_order_check)


def sample_kernels(names: list[str], size: int, seed: int) -> list[str]:
    """`size` of the kernels, drawn with `seed`, in name order; all of them when size is 0 or covers them."""
    if size <= 0 or size >= len(names):
        return sorted(names)
    return sorted(random.Random(seed).sample(sorted(names), size))


def order_differences(first: dict[str, str], second: dict[str, str]) -> list[str]:
    """Each cell whose outcome differs between the two orders, or that only one run has, as a line."""
    lines = []
    for cell_id in sorted(set(first) | set(second)):
        one, other = first.get(cell_id, "(no result)"), second.get(cell_id, "(no result)")
        if one != other:
            lines.append(f"{cell_id}: {one} in order {ORDERS[0]}, {other} in order {ORDERS[1]}")
    return lines


def _outcomes(path: Path) -> dict[str, str]:
    try:
        return {cell_id: cell.outcome for cell_id, cell in final_cells(read_results(path)).items()}
    except ResultsFileError:
        return {}


def command_order_check(args: argparse.Namespace) -> int:
    if args.sample < 0:
        raise CliError(f"--sample {args.sample}: expected a number of kernels, 0 (all) or more")
    specs = load_tier_and_specs(args)["specs"]
    try:
        kernels = sample_kernels(validate("kernel", args.kernel, specs), args.sample, args.seed)
    except SelectionError as exc:
        raise CliError(str(exc)) from None
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = Path(args.out_dir or Path(".matrix-results") / f"order-{stamp}")
    folder.mkdir(parents=True, exist_ok=True)
    selection = cli_arguments(vars(args) | {"kernel": [",".join(kernels)]}, [o for o in RUN_OPTIONS if o.dest in SELECTION])
    print(f"order-check: kernels {', '.join(kernels)}; two runs in one worker each, orders {' and '.join(ORDERS)}")
    outcomes = []
    for order in ORDERS:
        results = folder / f"order-{order}.jsonl"
        command = [sys.executable, "-m", "harness", "run", *selection, "-n", "1", "--order", order, "--confirm", "0",
                   "--baseline-dir", "none", "-o", str(results), "--overwrite"]
        with open(results.with_suffix(".log"), "w") as log:
            subprocess.run(command, stdout=log, stderr=subprocess.STDOUT)
        outcomes.append(_outcomes(results))
        print(f"  {order}: {len(outcomes[-1])} cells in {results}")
    if not outcomes[0] or not outcomes[1]:
        print(f"error: a run wrote no results; its log is beside the results file in {folder}", file=sys.stderr)
        return 1
    differences = order_differences(*outcomes)
    print(f"{len(outcomes[0])} cells, {len(differences)} differ between the two orders")
    for line in differences:
        print(f"  {line}")
    return 1 if differences else 0
