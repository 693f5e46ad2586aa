"""Fixtures for the report tests; the helpers themselves live in report_helpers.py."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from report_helpers import write_results

from harness.results import CellResult


@pytest.fixture
def make_results(tmp_path: Path) -> Callable[..., Path]:
    """make_results("a.jsonl", [cell(...), ...], env=environment(torch="2.6.0")) -> its path."""

    def make(name: str, cells: Iterable[CellResult], env: dict[str, Any] | None = None, **extra: Any) -> Path:
        return write_results(tmp_path / name, cells, env, **extra)

    return make
