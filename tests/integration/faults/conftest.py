"""The fault modules' shared runs (fault_runs.py), one set per test session whichever xdist worker asks first."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_runs import shared_fault_runs


@pytest.fixture(scope="session")
def fault_runs(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The folder holding eager.jsonl, compile.jsonl and clean.jsonl (fault_runs.py)."""
    base = tmp_path_factory.getbasetemp()
    return shared_fault_runs(base.parent if worker_id != "master" else base)
