"""The one way this package makes a Markdown table: tabulate, pinned so output is byte-identical."""

from __future__ import annotations

from collections.abc import Sequence

import tabulate as _tabulate

TABLE_FORMAT = "github"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured table of already-escaped cells.

    Column padding must not depend on whether `wcwidth` happens to be installed
    (it changes how emoji are measured), or goldens differ between machines; so
    wide-character mode is switched off for the call. Numbers are not reparsed.
    """
    saved = _tabulate.WIDE_CHARS_MODE
    _tabulate.WIDE_CHARS_MODE = False
    try:
        return _tabulate.tabulate(
            [list(row) for row in rows],
            headers=list(headers),
            tablefmt=TABLE_FORMAT,
            disable_numparse=True,
        )
    finally:
        _tabulate.WIDE_CHARS_MODE = saved
