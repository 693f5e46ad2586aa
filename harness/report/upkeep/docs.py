"""Keep the chart inside a hand-written document fresh: only the marked region is ever rewritten."""

from __future__ import annotations

import difflib
from pathlib import Path

from harness.atomic import write_text_atomic
from harness.report.markdown.chart import render_chart, render_rules
from harness.report.markdown.environment import environment_line
from harness.report.markdown.footnotes import CauseNotes
from harness.results import ResultsFile

BEGIN = "<!-- api-choice:begin -->"
END = "<!-- api-choice:end -->"


class DocsMarkerError(Exception):
    """A document that cannot be read, or lacks exactly one begin marker followed by one end marker; names the file."""


def render_region(results: ResultsFile) -> str:
    """What goes between the markers: the environment, the chart, its footnotes and rules."""
    notes = CauseNotes()
    parts = [environment_line(results.header), render_chart(results, notes)]
    if notes.render():
        parts.append(notes.render())
    parts.append(render_rules())
    return "\n\n".join(parts)


def marker_spans(text: str, marker: str) -> list[tuple[int, int]]:
    """Where the marker stands on a line of its own (spaces around it allowed). A marker quoted inside
    other text (a code span in a README's error table, say) is not a marker: it is never rewritten."""
    spans, position = [], 0
    for line in text.splitlines(keepends=True):
        if line.strip() == marker:
            start = position + line.index(marker)
            spans.append((start, start + len(marker)))
        position += len(line)
    return spans


def has_marker_line(text: str) -> bool:
    """True for a document with an api-choice region to keep fresh."""
    return bool(marker_spans(text, BEGIN))


def replace_region(text: str, region: str, name: str) -> str:
    """The same text with the region between the markers replaced; everything outside is kept byte for byte."""
    begins, ends = marker_spans(text, BEGIN), marker_spans(text, END)
    if len(begins) != 1 or len(ends) != 1 or begins[0][0] > ends[0][0]:
        raise DocsMarkerError(
            f"{name}: expected one {BEGIN!r} followed by one {END!r}, each on a line of its own "
            f"(found {len(begins)} begin, {len(ends)} end)"
        )
    return f"{text[:begins[0][1]]}\n{region}\n{text[ends[0][0]:]}"


def stale_diff(old: str, new: str, name: str) -> str:
    """What a check prints for a stale document: its current text against the expected one."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"{name} (current)", f"{name} (expected)"))


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
    diff = stale_diff(old, new, str(path))
    if not check:
        write_text_atomic(path, new)
    return True, diff
