"""Keep the chart inside a hand-written document fresh: only the marked region is ever rewritten."""

from __future__ import annotations

import difflib
from pathlib import Path

from harness.report.atomic import write_text_atomic
from harness.report.chart import render_chart, render_rules
from harness.report.environment import environment_line
from harness.report.footnotes import Footnotes
from harness.results import ResultsFile

# The results the shipped docs (reports/api-choice.md) are generated from: the committed GPU run.
# The nightly job's pull requests (and a maintainer's accepted GPU run) commit reports/gpu-results.jsonl,
# which then supersedes the run committed with the tests (tests/fixtures/ feeds goldens and stays put).
GPU_FIXTURE_RESULTS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / (
    "gpu-h100-torch2.11.0+cu130-triton3.6.0-libstdcxx-preload.jsonl"
)
PUBLISHED_GPU_RESULTS = Path(__file__).resolve().parents[2] / "reports" / "gpu-results.jsonl"
COMMITTED_GPU_RESULTS = PUBLISHED_GPU_RESULTS if PUBLISHED_GPU_RESULTS.exists() else GPU_FIXTURE_RESULTS

BEGIN = "<!-- api-choice:begin -->"
END = "<!-- api-choice:end -->"


class DocsMarkerError(Exception):
    """A document that cannot be read, or lacks exactly one begin marker followed by one end marker; names the file."""


def render_region(results: ResultsFile) -> str:
    """What goes between the markers: the environment, the chart, its footnotes and rules."""
    notes = Footnotes()
    parts = [environment_line(results.header), render_chart(results, notes)]
    if notes.render():
        parts.append(notes.render())
    parts.append(render_rules())
    return "\n\n".join(parts)


def replace_region(text: str, region: str, name: str) -> str:
    """The same text with the region between the markers replaced; everything outside is kept byte for byte."""
    begins, ends = text.count(BEGIN), text.count(END)
    if begins != 1 or ends != 1 or text.index(BEGIN) > text.index(END):
        raise DocsMarkerError(
            f"{name}: expected one {BEGIN!r} followed by one {END!r} (found {begins} begin, {ends} end)"
        )
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{region}\n{END}{tail}"


def update_docs(path: str | Path, results: ResultsFile, check: bool = False) -> tuple[bool, str]:
    """(stale, unified diff). With check, nothing is written; otherwise a stale file is replaced atomically."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8", newline="") as handle:  # keep CRLF files byte for byte
            old = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or ("not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc))
        raise DocsMarkerError(f"{path}: cannot be read as a document ({why})") from None
    new = replace_region(old, render_region(results), str(path))
    if new == old:
        return False, ""
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"{path} (current)", f"{path} (expected)"
        )
    )
    if not check:
        write_text_atomic(path, new)
    return True, diff
