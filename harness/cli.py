"""`python -m harness` / `triton-matrix`: run the matrix, list what it knows, and render what it measured."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from harness.atomic import write_text_atomic
from harness.bench import add_bench_parser
from harness.cli_common import CliError, check_writable, cli_errors, load_tier_and_specs, refuse_existing
from harness.findings_command import add_parser as add_findings_parser
from harness.nightly_cost import add_parser as add_nightly_cost_parser
from harness.order_check import add_parser as add_order_check_parser
from harness.perf.cli import add_parser as add_perf_parsers
from harness.process_exit import exit_without_final_collection
from harness.report.advice.advise import add_parser as add_advise_parser
from harness.report.cli import add_subcommands
from harness.report.compare.baseline import BaselineError, baseline_name, changes_against, load_baseline
from harness.report.markdown.aggregate import final_cells
from harness.report.markdown.summary import render_summary_markdown
from harness.report.page.html_cli import add_parser as add_html_parser
from harness.report.upstream.tutorial_command import add_parser as add_tutorial_parser
from harness.repro_command import add_parser as add_repro_parser
from harness.results import ResultsFileError, ResultsWriter, read_results
from harness.run.bytecode import enable_bytecode_cache
from harness.run.cell import artifacts_shared
from harness.run.confirm import CellRerunner, changed_cells, confirm_changes, confirming_line
from harness.run.confirm_sample import resolve_sample
from harness.run.earlier import outcome_options, run_inputs
from harness.run.environment import describe, environment_tag, resolve_tier
from harness.run.isolation import end_waited_on_cells, run_isolated
from harness.run.options import DEFAULT_TIMEOUT_S, EXPECTED_DIR, add_cli_options, pytest_arguments
from harness.run.order import OrderError, parse_order
from harness.run.plan import apply_reuse, command_line, interrupted_message, plan_run
from harness.run.repeat import parse_repeat
from harness.run.selection import SelectionError, chosen_kernels, chosen_pipelines, chosen_styles, select_cells
from harness.run.shard import parse_shard
from harness.run.startup import LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE, zygote_ahead
from harness.run.subsets import describe_default
from harness.run.workers import resolve_worker_count, workers_for_groups
from harness.vocab import CALL_SITE_PIPELINES, CALL_SITE_STYLES, PIPELINE_FAMILIES, STYLES

REPO_ROOT = Path(__file__).resolve().parent.parent
MATRIX_DIR = REPO_ROOT / "matrix"


def _add_run_parser(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run kernel x style x pipeline cells, each isolated, into a results file")
    add_cli_options(run)  # harness.run.options: the same table builds the pytest plugin's options
    run.add_argument("pytest_args", nargs="*", help="after --: passed to pytest unchanged")


def command_run(args: argparse.Namespace) -> int:
    """Plan, run the cells through pytest, confirm what changed against the baseline, then say what regressed.

    The run's zygote starts first, before the kernels load (harness.run.startup.zygote_ahead); it needs only the tier."""
    _check_options_before_the_kernels(args)
    args.tier = resolve_tier(args.tier)  # without importing torch; `auto` becomes what it found
    with zygote_ahead(args.tier, args.isolation) as ahead:
        return _plan_and_run(args, ahead)


def _plan_and_run(args: argparse.Namespace, ahead: Path | None) -> int:
    plan, tier, workers = _plan_run(args)
    output = plan.output
    summary = Path(args.summary) if args.summary else output.with_suffix(".md")
    _refuse_existing(args, plan, output, summary)
    if not args.pipeline and not args.all:
        print(describe_default(tier))
    if args.kernels_from and not args.kernel and not args.with_catalogue:
        print(f"kernels: the {len({cell.kernel for cell in plan.asked})} of {', '.join(args.kernels_from)}; the built-in "
              "catalogue joins with --with-catalogue, or by name with -k")
    print(f"{len(plan.to_run)} cells, {workers} worker(s), isolation {args.isolation}, tier {tier}")
    if not plan.to_run and not plan.resume and not plan.reused:
        print(f"shard {plan.shard}: no cells in this shard of the selection; nothing to run, nothing written")
        return 0
    code = _run_pytest(args, plan, tier, workers, ahead)
    if code is not None:
        return code
    try:
        results = read_results(output)
        expected, baseline_path = (_baseline_from_results(Path(args.baseline_results)) if args.baseline_results
                                   else _baseline_for(results.environment, args.baseline_dir))
        if expected is not None and args.confirm > 0:
            try:
                results = _confirm(args, results, expected, tier, output, workers) or results
            except KeyboardInterrupt:  # its tries were ended (harness.run.confirm)
                print(f"interrupted while confirming: the run's {len(results.cells)} cells are in {output}; its "
                      "changed cells have no confirmation record", file=sys.stderr)
                return 130
    except ResultsFileError as exc:
        raise CliError(str(exc)) from None
    write_text_atomic(summary, render_summary_markdown(results, f"Matrix summary: {output.name}"))
    print(f"files: {output} (one record per cell), {summary} (summary); "
          f"the chart and its evidence: python -m harness report {output}")
    missing = sorted({cell.id for cell in plan.asked} - {cell.id for cell in results.cells})
    if missing:
        print(f"error: {len(missing)} cell(s) have no result, first {missing[0]}", file=sys.stderr)
    regressed = _report_baseline(results, expected, baseline_path)
    return 1 if missing or regressed else 0


def _plan_run(args: argparse.Namespace) -> tuple[Any, str, int]:
    """The run's plan (selection, shard, resume, repeat), its tier and its worker count; bad input is a CliError."""
    loaded = load_tier_and_specs(args)
    tier = loaded["tier"]
    with cli_errors(SelectionError, ValueError):
        kernels = chosen_kernels(args.kernel, loaded["specs"], args.kernels_from, args.with_catalogue)
        styles = chosen_styles(args.style, args.all, tier)
        pipelines = chosen_pipelines(args.pipeline, args.all, tier)
        workers = resolve_worker_count(str(args.workers), tier)
    if not MATRIX_DIR.is_dir():
        raise CliError(f"{MATRIX_DIR}: the matrix suites are not there; run from a checkout (pip install -e .)")
    environment = describe(tier)
    with cli_errors(ValueError):  # --shard, --durations-from, --resume, --repeat, --order
        plan = plan_run(args, select_cells(kernels, styles, pipelines), environment,
                        Path("reports") / f"results-{environment_tag(environment)}.jsonl")
        if args.reuse:
            apply_reuse(plan, args.reuse, loaded["specs"], run_inputs(environment, _outcome_options(args, tier)))
    if str(args.workers) == "auto":
        workers = workers_for_groups(workers, len({cell.group for cell in plan.to_run}))
    return plan, tier, workers


def _outcome_options(args: argparse.Namespace, tier: str) -> dict[str, Any]:
    """The options in every cell's content key, as the plugin reads them (harness.plugin.state)."""
    return outcome_options(args.isolation, args.cold_cache, artifacts_shared(not args.no_shared_artifacts, args.cold_cache),
                           args.timeout or DEFAULT_TIMEOUT_S[tier], parse_repeat(args.repeat))


def _check_options_before_the_kernels(args: argparse.Namespace) -> None:
    """Refuse what needs no kernel to judge before loading them (torch, triton and every spec: about 3 CPU seconds
    on two cores): a style, pipeline, worker count, order, confirmation count or shard that is not one, and a named
    output that exists. What needs the kernels or the tier `_plan_run` checks once they are loaded."""
    with cli_errors(SelectionError, ValueError):
        chosen_styles(args.style, args.all, "cpu")  # a named style is checked against every tier's
        chosen_pipelines(args.pipeline, args.all, "cpu")
        if str(args.workers) != "auto":  # `auto` asks the machine, which may import torch
            resolve_worker_count(str(args.workers), "cpu")
        if args.shard:
            parse_shard(args.shard)
    with cli_errors(OrderError):
        parse_order(args.order)
    if args.confirm < 0:
        raise CliError(f"--confirm {args.confirm}: expected the number of new runs per changed cell, 0 or more")
    with cli_errors(ValueError):
        resolve_sample(args.confirm_sample, 1)
    if args.confirm_threshold < 0:
        raise CliError(f"--confirm-threshold {args.confirm_threshold}: expected a number of changed cells, 0 or more")
    if args.output and not args.resume:  # whether it can be written is asked later: that may make its folder
        output = Path(args.output)
        summary = Path(args.summary) if args.summary else output.with_suffix(".md")
        refuse_existing((output, summary), args.overwrite, "-o/--summary")


def _refuse_existing(args: argparse.Namespace, plan: Any, output: Path, summary: Path) -> None:
    refuse_existing((output, summary), args.overwrite or bool(plan.resume), "-o/--summary")  # resuming appends
    check_writable(output)
    check_writable(summary)


def _run_pytest(args: argparse.Namespace, plan: Any, tier: str, workers: int, ahead: Path | None) -> int | None:
    """Run the planned cells; None when pytest finished (whatever the cells did), else the exit code to return."""
    import pytest

    values = vars(args) | {"tier": tier, "output": str(plan.output), "overwrite": not plan.resume,
                           "resume": str(plan.output) if plan.resume else None}
    pytest_args = [str(MATRIX_DIR), "-q", "--no-header", "-p", "no:cacheprovider", "-p", "no:warnings", "-p", "no:benchmark",
                   "--rootdir", str(REPO_ROOT), "--matrix-progress",
                   *pytest_arguments(values), *_workers_arguments(args, plan, workers), "--dist", "loadgroup",
                   *(["--matrix-zygote-ahead", str(ahead)] if ahead else []), *args.pytest_args]
    try:
        # every cell reused: pytest in this process, no worker, writes the file with the copied cells
        code = pytest.main(pytest_args) if plan.to_run or plan.reused else pytest.ExitCode.OK
    except KeyboardInterrupt:  # outside pytest's own handling
        code = pytest.ExitCode.INTERRUPTED
    if code == pytest.ExitCode.INTERRUPTED:
        print(interrupted_message(plan, command_line()), file=sys.stderr)
        return 130
    # NO_TESTS_COLLECTED: xdist's controller can count no test when every worker it collected with was replaced
    # after a crash or a timeout; whether every asked cell has its record is checked from the file itself.
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        print(f"error: pytest stopped with exit code {int(code)}; results so far are in {plan.output}", file=sys.stderr)
        return int(code)
    return None


def _workers_arguments(args: argparse.Namespace, plan: Any, workers: int) -> list[str]:
    """`-n N`; with every cell reused, no worker (`-n 0`) and the isolation named, so that the plugin keeps it (without
    -n it would choose `process`) and its keys match the ones the plan reused them by."""
    if plan.to_run:
        return ["-n", str(workers)]
    return ["-n", "0", "--matrix-isolation", args.isolation]


def _baseline_for(environment: dict[str, Any], directory: str | None) -> tuple[dict[str, str] | None, Path | None]:
    """The reviewed expected outcomes of this environment and their file; (None, None) with --baseline-dir none."""

    if directory == "none":
        return None, None
    path = Path(directory or EXPECTED_DIR) / baseline_name(environment)
    try:
        return load_baseline(path.parent, environment), path
    except BaselineError as exc:
        raise CliError(str(exc)) from None


def _baseline_from_results(path: Path) -> tuple[dict[str, str], Path]:
    """Expected outcomes from an earlier results file (--baseline-results); bad input is a CliError."""
    if not path.is_file():
        raise CliError(f"{path}: --baseline-results names no file")
    with cli_errors(ResultsFileError):
        return {cell_id: cell.outcome for cell_id, cell in final_cells(read_results(path)).items()}, path


def _confirm(args: argparse.Namespace, results: Any, expected: dict[str, str], tier: str, output: Path,
             workers: int) -> Any:
    """Run the cells that changed against the baseline again, `workers` at once (harness.run.confirm); append the
    confirmed, flaky or unconfirmed records to the results file and return the file read again (None when nothing
    changed)."""

    cells = list(final_cells(results).values())
    changed = changed_cells(cells, expected)
    if not changed:
        return None
    sample = resolve_sample(args.confirm_sample, workers)
    print(confirming_line(len(changed), args.confirm, sample, workers, args.confirm_threshold))
    for variable in (LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE):  # the run's loader zygote has stopped
        os.environ.pop(variable, None)
    rerun = CellRerunner(tier, list(args.kernels_from), args.timeout or DEFAULT_TIMEOUT_S[tier], run_isolated)
    writer = ResultsWriter(output, results.header, append=True)
    try:
        def record(line: str) -> None:
            print(f"  {line}", flush=True)

        for confirmed in confirm_changes(changed, expected, rerun, args.confirm, report=record, workers=workers,
                                         sample=sample, threshold=args.confirm_threshold,
                                         end_tries=end_waited_on_cells):
            writer.write_cell(confirmed)
    finally:
        writer.close()
    return read_results(output)


def _report_baseline(results: Any, expected: dict[str, str] | None, path: Path | None) -> bool:
    """Print what changed against the reviewed baseline of this environment; True when a confirmed cell regressed."""
    if path is None:
        return False
    if expected is None:
        print(f"baseline: none for this environment ({path}); nothing to compare with")
        return False
    changes = changes_against(expected, results)
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
    add_order_check_parser(subparsers)
    add_nightly_cost_parser(subparsers)
    add_findings_parser(subparsers)
    add_tutorial_parser(subparsers)
    add_subcommands(subparsers)
    add_html_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """What `python -m harness` and `triton-matrix` do; returns the exit code (tests call it in their process)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers = {"run": command_run, "list": command_list}
    handler = handlers.get(args.command) or getattr(args, "handler", None)
    try:
        return handler(args) if handler else 2
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def run_and_exit() -> NoReturn:
    """Entry point of `python -m harness` and `triton-matrix`: the bytecode cache turned on, `main`, then the process
    ends without its last collection (harness.process_exit).

    The cache first (harness.run.bytecode): loading the kernels is a command's first import of torch, and enter_tier
    turned the cache on only after it. Where the environment forbids bytecode and the installed torch has none beside
    its sources, every run's controller compiled torch's modules from source (docs/benchmarks.md, "How the GPU
    default got from 465 s to 284 s")."""
    enable_bytecode_cache()
    exit_without_final_collection(main())
