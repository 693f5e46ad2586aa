"""`python -m harness` / `triton-matrix`: run the matrix, list what it knows, and render what it measured."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.bench import add_bench_parser
from harness.cli_common import CliError, load_tier_and_specs
from harness.cli_common import check_writable as _check_writable  # command_run's name until it adopts cli_common
from harness.perf.cli import add_parser as add_perf_parsers
from harness.report.advice.advise import add_parser as add_advise_parser
from harness.report.cli import add_subcommands
from harness.report.compare.baseline import baseline_changes, baseline_name
from harness.report.page.html_cli import add_parser as add_html_parser
from harness.repro_command import add_parser as add_repro_parser
from harness.run.options import add_cli_options, pytest_arguments
from harness.vocab import CALL_SITE_PIPELINES, CALL_SITE_STYLES, PIPELINE_FAMILIES, STYLES

REPO_ROOT = Path(__file__).resolve().parent.parent
MATRIX_DIR = REPO_ROOT / "matrix"


def _add_run_parser(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run kernel x style x pipeline cells, each isolated, into a results file")
    add_cli_options(run)  # harness.run.options: the same table builds the pytest plugin's options
    run.add_argument("pytest_args", nargs="*", help="after --: passed to pytest unchanged")


def command_run(args: argparse.Namespace) -> int:
    import pytest

    from harness.atomic import write_text_atomic
    from harness.report.markdown.summary import render_summary_markdown
    from harness.results import ResultsFileError, read_results
    from harness.run.environment import describe, environment_tag
    from harness.run.plan import interrupted_message, plan_run
    from harness.run.selection import SelectionError, chosen_pipelines, chosen_styles, select_cells, validate
    from harness.run.subsets import describe_default
    from harness.run.workers import resolve_worker_count

    loaded = load_tier_and_specs(args)
    tier = loaded["tier"]
    try:
        kernels = validate("kernel", args.kernel, loaded["specs"])
        styles = chosen_styles(args.style, args.all, tier)
        pipelines = chosen_pipelines(args.pipeline, args.all, tier)
        workers = resolve_worker_count(str(args.workers), tier)
    except (SelectionError, ValueError) as exc:
        raise CliError(str(exc)) from None
    if not MATRIX_DIR.is_dir():
        raise CliError(f"{MATRIX_DIR}: the matrix suites are not there; run from a checkout (pip install -e .)")
    environment = describe(tier)
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
    if not args.pipeline and not args.all:
        print(describe_default(tier))
    print(f"{len(plan.to_run)} cells, {workers} worker(s), isolation {args.isolation}, tier {tier}")
    if not plan.to_run and not plan.resume:
        print(f"shard {plan.shard}: no cells in this shard of the selection; nothing to run, nothing written")
        return 0

    values = vars(args) | {"tier": tier, "output": str(output), "overwrite": not plan.resume,
                           "resume": str(output) if plan.resume else None}
    pytest_args = [str(MATRIX_DIR), "-q", "--no-header", "-p", "no:cacheprovider", "-p", "no:warnings", "-p", "no:benchmark",
                   "--rootdir", str(REPO_ROOT), "--matrix-progress",
                   *pytest_arguments(values), "-n", str(workers), "--dist", "loadgroup", *args.pytest_args]
    try:
        code = pytest.main(pytest_args) if plan.to_run else pytest.ExitCode.OK
    except KeyboardInterrupt:  # outside pytest's own handling
        code = pytest.ExitCode.INTERRUPTED
    if code == pytest.ExitCode.INTERRUPTED:
        from harness.plugin.pytest_plugin import command_line

        print(interrupted_message(plan, command_line()), file=sys.stderr)
        return 130
    # NO_TESTS_COLLECTED: xdist's controller can count no test when every worker it collected with was replaced
    # after a crash or a timeout; whether every asked cell has its record is checked below, from the file itself.
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        print(f"error: pytest stopped with exit code {int(code)}; results so far are in {output}", file=sys.stderr)
        return int(code)
    try:
        results = read_results(output)
    except ResultsFileError as exc:
        raise CliError(str(exc)) from None
    write_text_atomic(summary, render_summary_markdown(results, f"Matrix summary: {output.name}"))
    print(f"files: {output} (one record per cell), {summary} (summary); "
          f"the chart and its evidence: python -m harness report {output}")
    missing = sorted({cell.id for cell in plan.asked} - {cell.id for cell in results.cells})
    if missing:
        print(f"error: {len(missing)} cell(s) have no result, first {missing[0]}", file=sys.stderr)
    regressed = _report_baseline(results, args.baseline_dir)
    return 1 if missing or regressed else 0


def _report_baseline(results: Any, directory: str | None) -> bool:
    """Print what changed against the reviewed baseline of this environment; True when a cell regressed."""
    from harness.plugin.pytest_plugin import EXPECTED_DIR  # deferred: imports pytest, for `run` only

    if directory == "none":
        return False
    path = Path(directory or EXPECTED_DIR) / baseline_name(results.environment)
    changes = baseline_changes(path.parent, results)
    if changes is None:
        print(f"baseline: none for this environment ({path}); nothing to compare with")
        return False
    print(f"against the baseline {path}: " + ", ".join(f"{len(cells)} {kind}" for kind, cells in changes.items()))
    for kind, cells in changes.items():
        for line in cells[:10]:
            print(f"  {kind}: {line}")
        if len(cells) > 10:
            print(f"  {kind}: ... and {len(cells) - 10} more")
    return bool(changes["regressions"])


def command_list(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    specs = load_tier_and_specs(args)["specs"]
    rows = [[spec.name, ", ".join(spec.features), ", ".join(str(d).removeprefix("torch.") for d in spec.dtypes),
             "yes" if spec.accepts_noncontiguous else "may refuse", spec.description, spec.source]
            for spec in specs.values()]
    print("kernels:")
    print(tabulate(rows, headers=["name", "features", "dtypes", "strided views", "description", "from"]))
    print("\nstyles: " + ", ".join(STYLES))
    print(f"call sites (docs/call-sites.md; in {', '.join(CALL_SITE_PIPELINES)}): {', '.join(CALL_SITE_STYLES)}")
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
    add_bench_parser(subparsers)
    add_perf_parsers(subparsers)  # perf, perf-report, perf-diff
    add_advise_parser(subparsers)
    add_repro_parser(subparsers)
    add_subcommands(subparsers)
    add_html_parser(subparsers)
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
