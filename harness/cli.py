"""`python -m harness` / `triton-matrix`: run the matrix, list what it knows, and render what it measured."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from harness.run.isolation import ISOLATION_MODES
from harness.run.loader_zygote import FRESH_LOADERS, WORKER_STARTS, worker_start
from harness.vocab import PIPELINE_FAMILIES, STYLES

REPO_ROOT = Path(__file__).resolve().parent.parent
MATRIX_DIR = REPO_ROOT / "matrix"


class CliError(Exception):
    """Bad input: printed as one line, exit 2."""


def _load(args: argparse.Namespace) -> dict[str, Any]:
    from harness.domain.registry import KernelSourceError, load_specs
    from harness.run.environment import enter_tier, resolve_tier

    tier = resolve_tier(getattr(args, "tier", "auto"))
    enter_tier(tier)  # before any kernel module is imported: decoration reads TRITON_INTERPRET
    try:
        return {"tier": tier, "specs": load_specs(args.kernels_from)}
    except KernelSourceError as exc:
        raise CliError(str(exc)) from None


def _add_run_parser(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run kernel x style x pipeline cells, each isolated, into a results file")
    run.add_argument("-k", "--kernel", action="append", default=[], help="kernel name (repeatable, or comma-separated)")
    run.add_argument("-s", "--style", action="append", default=[], help=f"style: {', '.join(STYLES)}")
    run.add_argument("-p", "--pipeline", action="append", default=[], help="pipeline name (see `list`)")
    run.add_argument("--subset", default=None, choices=("ci",),
                     help="a named set of pipelines (ci: every kernel and style in the CPU tier's CI pipelines)")
    run.add_argument("-n", "--workers", default="1", help="parallel workers (pytest-xdist; 'auto' = one per core)")
    run.add_argument("-o", "--output", default=None, help="results file (default reports/results-<env>.jsonl)")
    run.add_argument("--summary", default=None, help="Markdown summary file (default: the results path with .md)")
    run.add_argument("--overwrite", action="store_true", help="replace an existing results file")
    run.add_argument("--kernels-from", action="append", default=[], help="module or .py file with more KernelSpecs")
    run.add_argument("--tier", choices=("auto", "gpu", "cpu"), default="auto")
    run.add_argument("--isolation", choices=ISOLATION_MODES, default="fork",
                     help="fork: a child per cell; process: a new interpreter per cell; "
                          "worker: cells run in long-lived xdist workers, replaced after a crash, timeout or CUDA error")
    run.add_argument("--fresh-loader", choices=FRESH_LOADERS, default="zygote",
                     help="aoti_fresh_process: fork each loader from one process per run that imported torch only "
                          "(zygote), or start a new Python per cell (spawn)")
    run.add_argument("--worker-start", choices=WORKER_STARTS, default=None,
                     help="with xdist: fork each worker from the run's zygote, which imported torch and ran Inductor's "
                          "CPU ISA probe once (zygote), or start a new Python per worker (spawn); default: zygote with "
                          "--isolation worker, spawn otherwise")
    run.add_argument("--cold-cache", action="store_true", help="every cell gets empty Inductor and Triton caches")
    run.add_argument("--timeout", type=float, default=None, help="per-cell limit in seconds")
    run.add_argument("--shard", default=None, metavar="I/N", help="run only shard I of N (1 <= I <= N), deterministic")
    run.add_argument("--durations-from", default=None, metavar="RESULTS.jsonl",
                     help="balance --shard, and start the longest cell groups first, by the cell durations of this earlier run")
    run.add_argument("--resume", default=None, metavar="RESULTS.jsonl",
                     help="run only the selected cells not yet in this results file, appending to it")
    run.add_argument("--repeat", default="1", metavar="N", help="run each cell N times; differing outcomes make it flaky")
    run.add_argument("pytest_args", nargs="*", help="after --: passed to pytest unchanged")


def command_run(args: argparse.Namespace) -> int:
    import pytest

    from harness.report.atomic import write_text_atomic
    from harness.report.summary import render_summary_markdown
    from harness.results import ResultsFileError, read_results
    from harness.run.environment import describe, environment_tag
    from harness.run.plan import interrupted_message, plan_run
    from harness.run.selection import SelectionError, select_cells, validate
    from harness.vocab import PIPELINES

    loaded = _load(args)
    try:
        kernels = validate("kernel", args.kernel, loaded["specs"])
        styles = validate("style", args.style, STYLES)
        pipelines = validate("pipeline", args.pipeline or _subset(args), PIPELINES)
    except SelectionError as exc:
        raise CliError(str(exc)) from None
    if not MATRIX_DIR.is_dir():
        raise CliError(f"{MATRIX_DIR}: the matrix suites are not there; run from a checkout (pip install -e .)")
    environment = describe(loaded["tier"])
    try:  # --shard, --durations-from, --resume, --repeat
        plan = plan_run(args, select_cells(kernels, styles, pipelines), environment,
                        Path("reports") / f"results-{environment_tag(environment)}.jsonl")
    except ValueError as exc:
        raise CliError(str(exc)) from None
    output = plan.output
    summary = Path(args.summary) if args.summary else output.with_suffix(".md")
    for path in (output, summary):
        if path.exists() and not args.overwrite and not plan.resume:  # resuming appends, and renews the summary
            raise CliError(f"{path}: exists; pass --overwrite to replace it, or -o/--summary for another path")
    _check_writable(output)
    _check_writable(summary)

    pytest_args = [str(MATRIX_DIR), "-q", "-p", "no:cacheprovider", "--rootdir", str(REPO_ROOT),
                   "--matrix-results", str(output), "--matrix-overwrite", "--matrix-tier", loaded["tier"],
                   "--matrix-isolation", args.isolation, "--matrix-fresh-loader", args.fresh_loader,
                   "--matrix-worker-start", worker_start(args.isolation, args.worker_start)]
    for option, values in (("--matrix-kernel", kernels), ("--matrix-style", styles),
                           ("--matrix-pipeline", pipelines), ("--kernels-from", args.kernels_from)):
        for value in values:
            pytest_args += [option, value]
    if args.timeout:
        pytest_args += ["--matrix-timeout", str(args.timeout)]
    if args.cold_cache:
        pytest_args += ["--matrix-cold-cache"]
    if str(args.workers) not in ("0", "1") or args.isolation == "worker":  # worker mode needs xdist workers, even one
        workers = "1" if str(args.workers) == "0" else str(args.workers)
        pytest_args += ["-n", workers, "--dist", "loadgroup"]
    pytest_args += plan.options + args.pytest_args
    if not plan.to_run and not plan.resume:
        print(f"shard {plan.shard}: no cells in this shard of the selection; nothing to run, nothing written")
        return 0
    try:
        code = pytest.main(pytest_args) if plan.to_run else pytest.ExitCode.OK
    except KeyboardInterrupt:  # outside pytest's own handling
        code = pytest.ExitCode.INTERRUPTED
    if code == pytest.ExitCode.INTERRUPTED:
        from harness.plugin.pytest_plugin import command_line

        print(interrupted_message(plan, command_line()), file=sys.stderr)
        return 130
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        print(f"error: pytest stopped with exit code {int(code)}; results so far are in {output}", file=sys.stderr)
        return int(code)
    try:
        results = read_results(output)
    except ResultsFileError as exc:
        raise CliError(str(exc)) from None
    asked = {cell.id for cell in plan.asked}
    missing = sorted(asked - {cell.id for cell in results.cells})
    write_text_atomic(summary, render_summary_markdown(results, f"Matrix summary: {output.name}"))
    print(f"summary: {summary}")
    if missing:
        print(f"error: {len(missing)} cell(s) have no result, first {missing[0]}", file=sys.stderr)
        return 1
    differing = _differences_from_baseline(results)
    for line in differing:
        print(f"baseline: {line}", file=sys.stderr)
    return 1 if differing else 0


def _differences_from_baseline(results: Any) -> list[str]:
    """With a reviewed baseline for this environment, every cell it names must keep its outcome."""
    from harness.plugin.pytest_plugin import EXPECTED_DIR
    from harness.report.baseline import load_baseline

    expected = load_baseline(EXPECTED_DIR, results.environment) or {}
    return [f"{cell.id}: expected {expected[cell.id]}, measured {cell.outcome}"
            for cell in results.cells if cell.id in expected and expected[cell.id] != cell.outcome]


def _subset(args: argparse.Namespace) -> list[str]:
    from harness.run.subsets import subset_pipelines

    return list(subset_pipelines(args.subset)) if getattr(args, "subset", None) else []


def _check_writable(path: Path) -> None:
    if path.is_dir():
        raise CliError(f"{path}: is a folder, not a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{path}: cannot create its folder ({exc.strerror})") from None
    if path.parent.exists() and not path.parent.is_dir():
        raise CliError(f"{path}: its parent is not a folder")
    if not os.access(path.parent, os.W_OK):
        raise CliError(f"{path}: its folder is not writable")


def command_list(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    specs = _load(args)["specs"]
    rows = [[spec.name, ", ".join(spec.features), ", ".join(str(d).removeprefix("torch.") for d in spec.dtypes),
             "yes" if spec.accepts_noncontiguous else "may refuse", spec.description, spec.source]
            for spec in specs.values()]
    print("kernels:")
    print(tabulate(rows, headers=["name", "features", "dtypes", "strided views", "description", "from"]))
    print("\nstyles: " + ", ".join(STYLES))
    print("\npipelines:")
    for family, pipelines in PIPELINE_FAMILIES.items():
        print(f"  {family}: {', '.join(pipelines)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="triton-matrix", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_run_parser(subparsers)
    listing = subparsers.add_parser("list", help="the kernels, styles and pipelines this harness knows")
    listing.add_argument("--kernels-from", action="append", default=[])
    from harness.run.bench import add_bench_parser

    add_bench_parser(subparsers)
    try:
        from harness.report.cli import add_subcommands
    except ImportError:
        pass
    else:
        add_subcommands(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m harness` and `triton-matrix`; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers = {"run": command_run, "list": command_list}
    handler = handlers.get(args.command) or getattr(args, "handler", None)
    try:
        return handler(args) if handler else 2
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
