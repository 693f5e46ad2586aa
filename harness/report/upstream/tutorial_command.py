"""`python -m harness tutorial`: the PyTorch tutorial's chart against a results file (harness.report.upstream).

Default: every claim and, for each one the measurement contradicts, its evidence (Markdown). `--format rst`:
the chart as the tutorial's list-table, in its words. `--rst FILE`: FILE (the tutorial's sphinx-gallery
source) with its list-table rewritten in place, written to -o or stdout; FILE itself is never changed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.atomic import write_text_atomic
from harness.report.markdown.committed import COMMITTED_GPU_RESULTS
from harness.report.upstream.tutorial_chart import CHART_FILE, TutorialChartError, compare, load_chart
from harness.report.upstream.tutorial_markdown import render_comparison
from harness.report.upstream.tutorial_rst import render_list_table, rewrite_source
from harness.results import ResultsFileError, read_results


def command_tutorial(args: argparse.Namespace) -> int:
    try:
        results = read_results(args.results)
        chart = load_chart(Path(args.chart))
        if args.rst:
            try:
                source = Path(args.rst).read_text(encoding="utf-8")
            except (OSError, UnicodeError) as exc:
                raise TutorialChartError(f"{args.rst}: cannot be read ({exc})") from None
            if args.output and Path(args.output).resolve() == Path(args.rst).resolve():
                raise TutorialChartError(f"{args.output}: would overwrite the tutorial's source; write a copy")
            text = rewrite_source(source, results, args.rst)
        elif args.format == "rst":
            text = render_list_table(results, chart)
        else:
            text = render_comparison(results, args.results, chart, compare(results, chart))
    except (ResultsFileError, TutorialChartError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    if args.output:
        try:
            write_text_atomic(args.output, text)
        except OSError as exc:
            print(f"error: {args.output}: cannot be written ({exc.strerror or exc})", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tutorial", help="the PyTorch tutorial's chart against a results file: contradictions, or the chart as RST",
        description="Claim by claim, where the measurement contradicts the chart of the tutorial 'Using User-Defined"
                    " Triton Kernels with torch.compile'; or that chart rewritten from the measurement.")
    parser.add_argument("--results", default=str(COMMITTED_GPU_RESULTS),
                        help="results file (default: the published GPU results)")
    parser.add_argument("--format", choices=("md", "rst"), default="md",
                        help="md: the comparison with evidence; rst: the chart as the tutorial's list-table")
    parser.add_argument("--rst", metavar="FILE", help="the tutorial's .py source: write it with the chart rewritten")
    parser.add_argument("-o", "--output", help="write here instead of stdout")
    parser.add_argument("--chart", default=str(CHART_FILE), help="the tutorial's chart as JSON (default: the copy"
                        " in harness/report/upstream/tutorial-chart.json)")
    parser.set_defaults(handler=command_tutorial)
