"""Escaping: any message, however hostile, renders as one harmless table cell."""

from __future__ import annotations

import html
import re

from hypothesis import given
from hypothesis import strategies as st

from harness.report.markdown.escape import ELLIPSIS, escape_cell, first_line, one_line, truncate


def unescape(cell: str) -> str:
    """What a Markdown renderer would show for an escaped cell."""
    return html.unescape(re.sub(r"\\(.)", r"\1", cell))


def test_structure_characters_become_entities() -> None:
    assert escape_cell("a | b") == "a &#124; b"
    assert escape_cell("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert escape_cell("use `x` & y") == "use &#96;x&#96; &amp; y"


def test_inline_markup_is_backslashed() -> None:
    assert escape_cell("*bold* _it_ [link](x) ~s~ $m$ # h") == r"\*bold\* \_it\_ \[link\](x) \~s\~ \$m\$ \# h"


def test_newlines_collapse_and_long_text_is_cut() -> None:
    assert escape_cell("first\r\nsecond\n\tthird") == "first second third"
    cut = escape_cell("x" * 500, limit=20)
    assert cut == "x" * 19 + ELLIPSIS


def test_first_line_skips_blank_lines() -> None:
    assert first_line("\n\n  Traceback (most recent call last):\n  File") == "Traceback (most recent call last):"
    assert first_line(None) == ""


@given(st.text())
def test_no_structural_character_survives(text: str) -> None:
    cell = escape_cell(text)
    for forbidden in ("|", "\n", "\r", "<", ">", "`"):
        assert forbidden not in cell


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_escaping_shows_the_truncated_text(text: str, limit: int) -> None:
    assert unescape(escape_cell(text, limit=limit)) == truncate(one_line(text), limit)
    assert len(truncate(one_line(text), limit)) <= limit
