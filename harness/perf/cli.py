"""`python -m harness perf | perf-report | perf-diff`: time the styles, render the times, compare with a baseline."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import sys
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.cli_common import CliError, cli_errors, load_tier_and_specs, refuse_existing, selected
from harness.perf.performance import render_performance
from harness.perf.performance_diff import overhead_growth, render_changes, render_growth, run_to_run_changes
from harness.perf.performance_plot import write_overhead_plot
from harness.perf.plan import PerfJob, environment_mismatch, split_jobs
from harness.perf.runner import WorkerSettings, run_jobs
from harness.perf.sizes import perf_sizes
from harness.perf.stats import StopRule
from harness.perf_results import MODES, PERF_SCHEMA, PerfFileError, join_perf_files, read_perf_results, write_perf_file
from harness.results import ResultsFileError, ResultsWriter, header_record, read_results
from harness.run.environment import describe, environment_tag
from harness.run.options import RUN_OPTIONS, add_cli_options
from harness.run.selection import SelectionError, chosen_kernels
from harness.vocab import STYLES

DEFAULT_RULE = StopRule()
DEFAULT_TIMEOUT_S = 1800.0
DEFAULT_GPU_PROCESSES = 3  # docs/performance.md: what one process leaves out, and what three buy


def _comma_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_parser(subparsers: Any) -> None:
    """Register perf, perf-report and perf-diff."""
    perf = subparsers.add_parser("perf", help="time each kernel x style x mode x size that the matrix passed "
                                 "(host, device and first-call time; docs/performance.md)")
    add_cli_options(perf, [o for o in RUN_OPTIONS if o.dest in ("kernel", "style", "kernels_from", "with_catalogue", "tier")])
    perf.add_argument("--results", required=True, help="the matrix results file: only its passing cells are timed")
    perf.add_argument("-m", "--mode", action="append", default=[], help=f"modes (comma-separated): {', '.join(MODES)}")
    perf.add_argument("--sizes", default=None, help="sizes for every kernel, comma-separated (default: the spec's "
                      "perf_sizes, else sizes[0] and a size moving 256 MiB on the GPU, 64 KiB on the CPU tier)")
    perf.add_argument("-o", "--output", default=None, help="the perf results (JSONL; default reports/perf-<env>.jsonl)")
    perf.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    perf.add_argument("--rel-ci", type=float, default=DEFAULT_RULE.rel_ci,
                      help="stop when the median's 95%% CI is within this fraction of it (default %(default)s)")
    perf.add_argument("--min-samples", type=int, default=DEFAULT_RULE.min_samples)
    perf.add_argument("--max-samples", type=int, default=DEFAULT_RULE.max_samples, help="cap (default %(default)s)")
    perf.add_argument("--max-seconds", type=float, default=DEFAULT_RULE.max_seconds,
                      help="cap on the sampling time of one measurement (default %(default)s)")
    perf.add_argument("--warmup", type=int, default=10, help="warm-up calls after the first (default %(default)s)")
    perf.add_argument("--batch-ms", type=float, default=1.0, help="target length of one host-time sample (ms)")
    perf.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="limit per kernel x style x mode (s)")
    perf.add_argument("--processes", type=int, default=None,
                      help="fresh processes per kernel x style x mode, run in rounds (default 3 on the GPU, 1 on the "
                           "CPU tier): launch-bound host times differ between processes far more than within one")
    perf.set_defaults(handler=command_perf)

    report = subparsers.add_parser("perf-report", help="render perf results as Markdown (and a PNG plot)")
    report.add_argument("perf_results")
    report.add_argument("-o", "--output", help="the Markdown file (default: stdout)")
    report.add_argument("--png", help="also write the plot of overhead by style and mode here")
    report.set_defaults(handler=command_perf_report)

    join = subparsers.add_parser(
        "perf-join", help="join perf runs of one machine into one file: each kernel x mode from the last run that has it")
    join.add_argument("perf_results", nargs="+")
    join.add_argument("-o", "--output", required=True)
    join.set_defaults(handler=command_perf_join)

    diff = subparsers.add_parser("perf-diff", help="flag styles whose overhead over native grew by more than 20%%")
    diff.add_argument("baseline")
    diff.add_argument("new")
    diff.add_argument("--threshold", type=float, default=0.20, help="flag growth above this fraction (default 0.20)")
    diff.add_argument("-o", "--output", help="write the Markdown here (default: stdout)")
    diff.add_argument("--summary", action="store_true", help="also append it to $GITHUB_STEP_SUMMARY")
    diff.set_defaults(handler=command_perf_diff)


def _numbers(args: argparse.Namespace) -> StopRule:
    rule = StopRule(rel_ci=args.rel_ci, min_samples=args.min_samples, max_samples=args.max_samples,
                    max_seconds=args.max_seconds)
    if not 0 < rule.rel_ci < 1 or rule.min_samples < 1 or rule.max_samples < rule.min_samples or rule.max_seconds <= 0:
        raise CliError("--rel-ci must be in (0, 1), --min-samples >= 1, --max-samples >= --min-samples, --max-seconds > 0")
    if args.warmup < 0 or args.batch_ms <= 0 or args.timeout <= 0:
        raise CliError("--warmup must be >= 0, --batch-ms and --timeout > 0")
    if args.processes is not None and args.processes < 1:
        raise CliError("--processes must be >= 1")
    return rule


def command_perf(args: argparse.Namespace) -> int:
    rule = _numbers(args)
    loaded = load_tier_and_specs(args)
    tier = loaded["tier"]
    with cli_errors(SelectionError):
        kernels = chosen_kernels(args.kernel, loaded["specs"], args.kernels_from, args.with_catalogue)
    styles, modes = selected("style", args.style, STYLES), selected("mode", args.mode, MODES)
    sizes = _sizes(args.sizes)
    with cli_errors(ResultsFileError):
        matrix = read_results(args.results)
    environment = describe(tier)
    mismatch = environment_mismatch(matrix.environment, environment)
    if mismatch:
        raise CliError(f"{args.results}: {mismatch}; run the matrix in this environment first")
    output = Path(args.output or Path("reports") / f"perf-{environment_tag(environment)}.jsonl")
    refuse_existing([output], args.overwrite, "-o")
    jobs = [PerfJob(kernel, style, mode, tuple(perf_sizes(loaded["specs"][kernel], tier, sizes)))
            for kernel in kernels for style in styles for mode in modes]
    to_time, untimed = split_jobs(jobs, matrix)
    processes = args.processes or (1 if tier == "cpu" else DEFAULT_GPU_PROCESSES)
    writer = ResultsWriter(output, _header(args, environment, rule, processes))
    try:
        for record in untimed:
            writer.write_record(record.to_record())
        print(f"perf: {len(to_time)} of {len(jobs)} kernel x style x mode to time (the others did not pass in "
              f"{args.results}), tier {tier}{'; times are Triton-interpreter times' if tier == 'cpu' else ''}")
        settings = WorkerSettings(tier=tier, kernels_from=tuple(args.kernels_from), rule=rule, warmup=args.warmup,
                                  batch_s=args.batch_ms / 1e3, timeout_s=args.timeout)
        timed = run_jobs(to_time, settings, lambda record: writer.write_record(record.to_record()), processes=processes)
    finally:
        writer.close()
    print(f"files: {output} ({timed} timed records); render: python -m harness perf-report {output} "
          "-o reports/performance.md --png reports/performance.png")
    return 0


def _sizes(value: str | None) -> list[int] | None:
    """--sizes as whole numbers >= 1; None (each kernel's own sizes) when not given."""
    if not value:
        return None
    try:
        sizes = [int(part) for part in _comma_list(value)]
    except ValueError:
        raise CliError(f"--sizes: {value!r} is not a comma-separated list of whole numbers") from None
    if not sizes or min(sizes) < 1:
        raise CliError("--sizes: every size must be >= 1")
    return sizes


def _header(args: argparse.Namespace, environment: dict[str, Any], rule: StopRule, processes: int) -> dict[str, Any]:
    """The perf file's header: the matrix's, with the method every number was measured by."""
    method = {"rule": dataclasses.asdict(rule), "warmup_calls": args.warmup, "processes": processes,
              "batch_ms": args.batch_ms, "order": "one kernel x style x mode at a time, each in a fresh Python with "
              "empty Triton and Inductor caches; sizes in the order listed"
              + (f"; {processes} processes each, in rounds over the styles of a kernel and mode" if processes > 1 else ""),
              "seed": 0,
              "clock": "interpreter" if environment["tier"] == "cpu" else "gpu"}
    return header_record(environment, datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                         ["python", "-m", "harness", *sys.argv[1:]], perf_schema=PERF_SCHEMA, method=method,
                         matrix_results=str(args.results))


def command_perf_report(args: argparse.Namespace) -> int:
    try:
        perf = read_perf_results(args.perf_results)
    except PerfFileError as exc:
        raise CliError(str(exc)) from None
    if perf.dropped_torn_line:
        print(f"warning: {args.perf_results}: the last line is torn (a run killed mid-write); it was dropped",
              file=sys.stderr)
    png_name = None
    if args.png:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError("--png needs matplotlib (pip install 'triton-compat-matrix[plot]')") from None
        write_overhead_plot(perf, Path(args.png))
        png_name = os.path.relpath(args.png, Path(args.output).parent) if args.output else args.png
    text = render_performance(perf, png_name)
    if args.output:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def command_perf_join(args: argparse.Namespace) -> int:
    if any(Path(args.output).resolve() == Path(name).resolve() for name in args.perf_results):
        raise CliError(f"{args.output}: the output would overwrite an input")
    try:
        joined = join_perf_files(args.perf_results)
    except PerfFileError as exc:
        raise CliError(str(exc)) from None
    for run in joined.header["joined_from"]:
        print(f"{run['source']}: {', '.join(run['kernel_modes']) or 'nothing (every kernel x mode is in a later run)'}")
    print(write_perf_file(joined, args.output))
    return 0


def command_perf_diff(args: argparse.Namespace) -> int:
    try:
        baseline, new = read_perf_results(args.baseline), read_perf_results(args.new)
    except PerfFileError as exc:
        raise CliError(str(exc)) from None
    rows = overhead_growth(baseline, new)
    text = render_growth(rows, args.threshold, args.baseline, args.new) + render_changes(run_to_run_changes(baseline, new))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if args.summary and summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(text)
    return 1 if any(row.flagged(args.threshold) for row in rows) else 0
