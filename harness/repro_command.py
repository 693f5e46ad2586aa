"""`python -m harness repro CELL_ID [-o repro.py]`: write one cell as a standalone script (harness.domain.repro)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.cli_common import CliError, load_tier_and_specs
from harness.results import ResultsFileError, read_results
from harness.vocab import CALL_SITE_STYLES, PIPELINES, STYLES, split_cell_id


def _expected(path: str | None, wanted: str) -> dict | None:
    """The cell's recorded outcome from a results file, for the script's header; None without --results."""
    if path is None:
        return None

    try:
        results = read_results(path)
    except ResultsFileError as exc:
        raise CliError(str(exc)) from None
    latest = {cell.id: cell for cell in results.cells}
    if wanted not in latest:
        raise CliError(f"{path}: holds no cell {wanted}")
    return latest[wanted].to_record()


def command_repro(args: argparse.Namespace) -> int:
    try:
        kernel, style, pipeline = split_cell_id(args.cell)
    except ValueError:
        raise CliError(f"{args.cell!r}: a cell id is kernel/style/pipeline") from None
    if style not in STYLES and style not in CALL_SITE_STYLES:
        raise CliError(f"{args.cell}: unknown style {style!r} (known: {', '.join(STYLES + CALL_SITE_STYLES)})")
    if pipeline not in PIPELINES:
        raise CliError(f"{args.cell}: unknown pipeline {pipeline!r} (known: {', '.join(PIPELINES)})")
    expected = _expected(args.results, args.cell)
    loaded = load_tier_and_specs(args)
    if kernel not in loaded["specs"]:
        raise CliError(f"{args.cell}: unknown kernel {kernel!r} (known: {', '.join(sorted(loaded['specs']))})")
    text = repro_text(loaded["specs"][kernel], style, pipeline, loaded["tier"], expected)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"{args.output}: cannot be written ({exc.strerror or exc})") from None
        print(f"wrote {args.output}: run it with python {args.output} (torch and triton only, no harness)",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def repro_text(spec: Any, style: str, pipeline: str, tier: str, expected: dict | None) -> str:
    """The script for one cell; a cell that is `skip` here gets one too, which prints why and exits 0."""
    from harness.domain.repro import REPRO_ERRORS, write_repro  # deferred: imports torch; `repro --help` stays light

    try:
        return write_repro(spec, style, pipeline, tier, expected=expected)
    except REPRO_ERRORS as exc:
        raise CliError(str(exc)) from None


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("repro", help="write one cell as a standalone Python script (for an upstream issue)")
    parser.add_argument("cell", help="kernel/style/pipeline, e.g. add/raw/export_nonstrict or add/raw@module_forward/aoti")
    parser.add_argument("-o", "--output", help="write the script here (default: stdout)")
    parser.add_argument("--tier", choices=("auto", "gpu", "cpu"), default="auto",
                        help="gpu: CUDA tensors; cpu: TRITON_INTERPRET=1 on CPU tensors, set by the script itself")
    parser.add_argument("--kernels-from", action="append", default=[])
    parser.add_argument("--results", help="a results file holding the cell: its recorded outcome goes in the header")
    parser.set_defaults(handler=command_repro)
