"""Make untrusted text (error messages, kernel names) safe inside a Markdown table cell.

Error messages come from arbitrary exceptions: a `|` would split a table cell, a
`<script>` would be live HTML, a newline would end the table. Everything that
could change the structure is turned into an entity or a backslash escape.
"""

from __future__ import annotations

import unicodedata

DEFAULT_LIMIT = 160
ELLIPSIS = "…"

# Entities, not backslashes, for the characters that break structure: GFM splits
# table rows on literal `|` before it reads backslash escapes, and an entity
# cannot be undone by a stray backslash before it.
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;", "`": "&#96;"}
# Backslash escapes for inline markup: emphasis, links, headings, strike, math.
_BACKSLASHED = set("\\*_[]#~$")
# Both as one table for str.translate: a report escapes tens of thousands of cells, and a loop over each character in
# Python took a quarter of a large report's rendering (cProfile of the determinism test's renders).
_ESCAPES = str.maketrans({**_ENTITIES, **{ch: "\\" + ch for ch in _BACKSLASHED}})


def one_line(text: object) -> str:
    """Collapse every run of whitespace (newlines included) to one space and drop control characters."""
    joined = " ".join(str(text).split())
    if joined.isprintable():  # nothing of Cc, Cf or Cs in it (printable excludes them): the usual case, kept whole
        return joined
    return "".join(ch for ch in joined if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))


def truncate(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """Cut to `limit` characters, ending in an ellipsis, so one long traceback cannot swamp a table."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def escape_cell(text: object, limit: int = DEFAULT_LIMIT) -> str:
    """Text that renders as itself in a Markdown table cell and cannot break or inject into it."""
    return truncate(one_line(text), limit).translate(_ESCAPES)


def first_line(text: str | None) -> str:
    """The first non-blank line of a message: what a reader needs to recognise the error."""
    if not text:
        return ""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""
