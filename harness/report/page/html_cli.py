"""`python -m harness html RESULTS... -o report.html [--png heatmap.png]`: the page and the picture."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.atomic import write_text_atomic
from harness.report.compare.history import HistoryError
from harness.report.page.heatmap_png import write_heatmap_png
from harness.report.page.html import render_html
from harness.results import ResultsFileError, read_results


def command_html(args: argparse.Namespace) -> int:
    """0: written; 2: a results file that cannot be read (one line naming it)."""
    try:
        files = [(name, read_results(name)) for name in args.results]
        write_text_atomic(Path(args.output), render_html(files))
        if args.png:
            write_heatmap_png(files, Path(args.png))
    except (OSError, UnicodeError, ResultsFileError, HistoryError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}" + (f" and {args.png}" if args.png else ""))
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    text = "One self-contained HTML page (chart, heatmap with evidence, filters, history) from results files."
    parser = subparsers.add_parser("html", help=text, description=text)
    parser.add_argument("results", nargs="+", help="results files; several versions add the history view")
    parser.add_argument("-o", "--output", required=True, help="the .html file to write")
    parser.add_argument("--png", help="also draw the heatmap of the newest version as this PNG (matplotlib)")
    parser.set_defaults(handler=command_html)
