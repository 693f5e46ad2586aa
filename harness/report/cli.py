"""argparse subcommands for the report side; each handler returns the process exit status.

0: done (and no regression / docs fresh); 1: diff found a regression or docs are
stale; 2: bad input, one `error: ...` line on stderr and no output file touched.
Wire with `add_subcommands(parser.add_subparsers())`, then `sys.exit(args.handler(args))`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from harness.atomic import write_text_atomic
from harness.report.advice.library_page import render_library_page
from harness.report.compare.baseline import DEFAULT_DIRECTORY, BaselineError, write_baseline
from harness.report.compare.diff import diff_results, render_diff
from harness.report.compare.flakes import render_flake_history
from harness.report.compare.history import HISTORY_DIR, HistoryError, history_file, render_history
from harness.report.compare.merge import MergeError, merge_files, results_text, settle_flaky
from harness.report.markdown.committed import COMMITTED_GPU_RESULTS, published_results
from harness.report.markdown.evidence_sections import render_overrides, render_tracebacks
from harness.report.markdown.features import FeatureError, only_feature
from harness.report.markdown.render import render_report
from harness.report.markdown.timings import render_timings
from harness.report.upkeep.docs import DocsMarkerError, update_docs
from harness.results import ResultsFile, ResultsFileError, read_results, unknown_names, weighed_durations

Handler = Callable[[argparse.Namespace], int]


class OutputError(Exception):
    """An output path that would destroy an input; the message names it."""


BAD_INPUT = (
    OSError, OutputError, ResultsFileError, FeatureError, DocsMarkerError, MergeError, HistoryError, BaselineError,
    UnicodeError,
)


def _read(path: str) -> ResultsFile:
    """read_results, plus a warning on stderr for what was tolerated or flagged (never an error: exit stays 0)."""
    results = read_results(path)
    if results.dropped_torn_line:
        print(f"warning: {path}: the last line is torn (a run killed mid-write); it was dropped", file=sys.stderr)
    unknown = unknown_names(results.cells)
    if unknown:
        listed = "; ".join(f"{kind} {', '.join(repr(n) for n in names)}" for kind, names in unknown.items())
        print(f"warning: {path}: names this harness does not know ({listed}); flagged in the report, "
              "counted as not passed", file=sys.stderr)
    return results


def _emit(text: str, output: str | None, inputs: tuple[str, ...] = ()) -> None:
    if output:
        for source in inputs:
            if Path(output).resolve() == Path(source).resolve():
                raise OutputError(f"{output}: the output would overwrite an input; choose another -o")
        write_text_atomic(output, text)
    else:
        sys.stdout.write(text)


def _guarded(handler: Handler) -> Handler:
    """Turn any bad-input exception into one stderr line and exit status 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except BAD_INPUT as exc:
            print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2

    return run


def report(args: argparse.Namespace) -> int:
    results = _read(args.results)
    if args.feature:
        results = only_feature(results, args.feature, args.results)
    text = render_report(results) + render_overrides(results)
    if args.tracebacks:
        text += "\n" + render_tracebacks(results)
    _emit(text, args.output, (args.results,))
    return 0


def docs(args: argparse.Namespace) -> int:
    stale, diff = update_docs(args.file, _read(args.results), check=args.check)
    if args.check and stale:
        sys.stdout.write(diff)
        return 1
    return 0


def diff(args: argparse.Namespace) -> int:
    old, new = _read(args.old), _read(args.new)
    _emit(render_diff(old, new, args.old, args.new, markdown=args.format == "markdown"), args.output, (args.old, args.new))
    return 1 if diff_results(old, new).has_regressions else 0


def baseline(args: argparse.Namespace) -> int:
    print(write_baseline(_read(args.results), args.dir, source=args.results))
    return 0


def merge(args: argparse.Namespace) -> int:
    output = merge_files(args.shards, args.output, without_tracebacks=args.without_tracebacks, rerun=args.rerun)
    if args.rerun:
        for change in read_results(output).header.get("replaced", []):
            print(f"replaced {change['id']}: {change['was']} ({change['from']}) -> {change['now']} ({change['by']})")
    print(output)
    return 0


def settle(args: argparse.Namespace) -> int:
    if Path(args.output).resolve() in (Path(args.results).resolve(), Path(args.reference).resolve()):
        raise MergeError(f"{args.output}: the output would overwrite an input")
    settled, kept = settle_flaky(_read(args.results), _read(args.reference))
    write_text_atomic(Path(args.output), results_text(settled))
    for cell_id in kept:
        print(f"kept the published record of flaky {cell_id}")
    print(args.output)
    return 0


def flakes(args: argparse.Namespace) -> int:
    _emit(render_flake_history([_read(name) for name in args.results]), args.output, tuple(args.results))
    return 0


def history(args: argparse.Namespace) -> int:
    _emit(render_history([(name, _read(name)) for name in args.results]), args.output, tuple(args.results))
    return 0


def reference(args: argparse.Namespace) -> int:
    """Print the results a nightly build is compared with, or (--history-file) where its history is kept."""
    if (args.results is None) == (args.torch is None):
        raise OutputError("reference: give a results file, or --torch (and --tier), not both")
    environment = _read(args.results).environment if args.results else {"torch": args.torch, "tier": args.tier}
    kept = history_file(environment, args.dir)
    if args.history_file:
        print(kept)
    elif args.build != "stable" and kept.is_file():
        print(kept)  # a build of another release: compared with what its release recorded last
    else:
        print(args.published)
    return 0


def timings(args: argparse.Namespace) -> int:
    results = _read(args.results)
    weights = _durations_source(args.durations_from, results)
    durations = weighed_durations(_read(str(weights))) if weights is not None else None  # as the run weighed them
    _emit(render_timings(results, args.results, durations, str(weights or "")), args.output, (args.results,))
    return 0


def _durations_source(asked: str | None, results: ResultsFile) -> Path | None:
    """What the run weighed its cells by, as `harness run` chose it: --durations-from (the run's header names it), else
    the published results of its tier (harness.plugin.state); None where neither is here."""
    if asked:
        return Path(asked)
    named = results.header.get("durations_from")
    if isinstance(named, str) and Path(named).is_file():
        return Path(named)
    tier = results.environment.get("tier")
    return published_results(tier) if isinstance(tier, str) else None


def library_page(args: argparse.Namespace) -> int:
    _emit(render_library_page(_read(args.results), args.results, args.title), args.output, (args.results,))
    return 0


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    """Register report, docs, diff, baseline, merge, settle, flakes, history, library-page and timings, in that order;
    each sets `handler` on its namespace."""
    _add_rendering(subparsers)
    _add_comparisons(subparsers)
    _add_joins(subparsers)
    _add_summaries(subparsers)


def _subcommand(subparsers: argparse._SubParsersAction, name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help, description=help)
    parser.set_defaults(handler=_guarded(handler))
    return parser


def _add_rendering(subparsers: argparse._SubParsersAction) -> None:
    """The commands that render one results file as a document: `report` and `docs`."""
    add = partial(_subcommand, subparsers)
    parser = add("report", report, "Render a results file as the Markdown report.")
    parser.add_argument("results")
    parser.add_argument("-o", "--output", help="write here (atomically) instead of stdout")
    parser.add_argument("--feature", help="only the kernels tagged with this Triton feature (e.g. autotune)")
    parser.add_argument("--tracebacks", action="store_true", help="append every non-pass's full traceback")

    parser = add("docs", docs, "Rewrite the api-choice region of a document from a results file.")
    parser.add_argument("file")
    parser.add_argument("--results", default=str(COMMITTED_GPU_RESULTS),
                        help="results file to render (default: the committed GPU results)")
    parser.add_argument("--check", action="store_true", help="change nothing; print a diff and exit 1 when stale")


def _add_comparisons(subparsers: argparse._SubParsersAction) -> None:
    """The commands that compare a results file with another or with its baseline: `diff` and `baseline`."""
    add = partial(_subcommand, subparsers)
    parser = add("diff", diff, "Compare two results files; exit 1 on any regression.")
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("-o", "--output")
    parser.add_argument("--format", choices=("markdown", "text"), default="markdown")

    parser = add("baseline", baseline, "Write the expected outcomes of a results file as a baseline.")
    parser.add_argument("results")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIRECTORY)


def _add_joins(subparsers: argparse._SubParsersAction) -> None:
    """The commands that join several results files into one, or into their flake history: `merge`, `settle`, `flakes`."""
    add = partial(_subcommand, subparsers)
    parser = add("merge", merge, "Join the shards of one run into one results file.")
    parser.add_argument("shards", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--without-tracebacks", action="store_true",
                        help="drop each cell's full traceback (to publish a run in the repository)")
    parser.add_argument("--rerun", action="store_true",
                        help="the files are a run and later runs of some of its cells: a later file's record of a "
                             "cell replaces the earlier one, and the header lists each one that changed the outcome or error")

    parser = add("settle", settle, "A nightly's results with each flaky cell's record taken from the published results.")
    parser.add_argument("results")
    parser.add_argument("--reference", required=True, help="the published results whose records flaky cells keep")
    parser.add_argument("-o", "--output", required=True)

    parser = add("flakes", flakes, "The flake history of several nights' results files: which cells were flaky when.")
    parser.add_argument("results", nargs="+")
    parser.add_argument("-o", "--output")


def _add_summaries(subparsers: argparse._SubParsersAction) -> None:
    """The commands that summarise results files: `history`, `library-page` and `timings`."""
    add = partial(_subcommand, subparsers)
    parser = add("history", history, "Tabulate capabilities across torch/triton versions.")
    parser.add_argument("results", nargs="+")
    parser.add_argument("-o", "--output")

    parser = add("reference", reference, "The results a nightly build is compared with: the published results for the "
                 "stable build, else its torch release's history file where one exists (--history-file: that file's path).")
    parser.add_argument("results", nargs="?", help="the build's results (its header names the tier and torch)")
    parser.add_argument("--torch", help="the build's torch version, instead of a results file (e.g. 2.13.0.dev20261203+cu130)")
    parser.add_argument("--tier", default="gpu", help="with --torch: the tier (default gpu)")
    parser.add_argument("--build", default="stable", help="the build's name in the nightly's matrix (stable, nightly, 2.12.0)")
    parser.add_argument("--history-file", action="store_true", help="print where the build's history is kept instead")
    parser.add_argument("--dir", type=Path, default=HISTORY_DIR, help=f"the history files' folder (default {HISTORY_DIR})")
    parser.add_argument("--published", default=str(COMMITTED_GPU_RESULTS),
                        help="the published results (default: the committed GPU results)")

    parser = add("library-page", library_page, "One kernel library's page: advise for three needs (training + "
                 "compile, inference + AOTInductor, a shipped ExportedProgram), then its chart and evidence.")
    parser.add_argument("results")
    parser.add_argument("--title", required=True, help="the page's title, e.g. 'Liger-Kernel 0.8.5 on one H100'")
    parser.add_argument("-o", "--output")

    parser = add("timings", timings, "Where a results file's time went: cell-seconds per pipeline and stage, the "
                 "timeline, and the live count's time left replayed.")
    parser.add_argument("results")
    parser.add_argument("--durations-from", metavar="RESULTS",
                        help="weigh the replayed time left by this results file's durations (default: what the run "
                             "weighed by, its --durations-from or the published results of its tier)")
    parser.add_argument("-o", "--output")
