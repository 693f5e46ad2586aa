"""`python -m harness findings RESULTS [-o findings.md]`: PyTorch's own faults in a results file, as upstream reports.

The grouping and the page are the report side's (harness.report.upstream, torch-free); each group's
reproducer is written by the domain (harness.domain.repro), which imports torch: this glue joins the two.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.atomic import write_text_atomic
from harness.cli_common import CliError
from harness.report.markdown.environment import tier_of
from harness.report.markdown.known_reports import kernel_features
from harness.report.upstream.findings import find_groups, representative
from harness.report.upstream.findings_markdown import render_findings
from harness.results import ResultsFile, ResultsFileError, read_results


def reproducers_for(results: ResultsFile, kernels_from: list[str]) -> tuple[dict[str, str | None], dict[str, str]]:
    """(cell id -> its script, cell id -> why there is none) for each group's representative cell."""
    from harness.domain.registry import KernelSourceError, load_specs  # deferred: imports the kernels, and torch
    from harness.domain.repro import REPRO_ERRORS, write_repro  # deferred: imports torch; `findings --help` stays light

    try:
        specs = load_specs(kernels_from)
    except KernelSourceError as exc:
        raise CliError(str(exc)) from None
    features = kernel_features(results)
    tier = tier_of(results.environment)
    scripts: dict[str, str | None] = {}
    notes: dict[str, str] = {}
    for group in find_groups(results):
        cell = representative(group, features)
        style = f"{cell.style}@{cell.call_site}" if cell.call_site else cell.style
        if cell.kernel not in specs:
            scripts[cell.id] = None
            notes[cell.id] = f"(No script: kernel {cell.kernel} is not among the kernels here; pass --kernels-from.)"
            continue
        try:
            scripts[cell.id] = write_repro(specs[cell.kernel], style, cell.pipeline, tier, expected=cell.to_record(),
                                           name_machine=False)  # the page names the measured versions itself
        except REPRO_ERRORS as exc:
            scripts[cell.id] = None
            notes[cell.id] = f"(No script: {exc}.)"
    return scripts, notes


def command_findings(args: argparse.Namespace) -> int:
    try:
        results = read_results(args.results)
    except ResultsFileError as exc:
        raise CliError(str(exc)) from None
    if args.output and Path(args.output).resolve() == Path(args.results).resolve():
        raise CliError(f"{args.output}: the output would overwrite the results file; choose another -o")
    scripts, notes = reproducers_for(results, args.kernels_from)
    text = render_findings(results, args.results, find_groups(results), scripts, notes)
    if args.output:
        try:
            write_text_atomic(args.output, text)
        except OSError as exc:
            raise CliError(f"{args.output}: cannot be written ({exc.strerror or exc})") from None
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("findings", help="the cells where PyTorch itself is at fault, grouped by cause, "
                                   "each group a section ready for an upstream issue with its reproducer")
    parser.add_argument("results", help="a results file (JSON Lines)")
    parser.add_argument("-o", "--output", help="write the Markdown here (default: stdout)")
    parser.add_argument("--kernels-from", action="append", default=[],
                        help="a plug-in the results measured: its kernels' reproducers need it")
    parser.set_defaults(handler=command_findings)
