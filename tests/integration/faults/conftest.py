"""The fault modules' shared runs (fault_runs.py), one set per test session whichever xdist worker asks first."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_runs import shared_fault_runs


def _shared_temp(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    base = tmp_path_factory.getbasetemp()
    return base.parent if worker_id != "master" else base  # xdist's workers share the parent


@pytest.fixture(scope="session")
def fault_runs(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The folder holding eager.jsonl, compile.jsonl and clean.jsonl (fault_runs.py)."""
    return shared_fault_runs(_shared_temp(tmp_path_factory, worker_id))


@pytest.fixture(scope="session")
def clean_fault_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The same folder, where only clean.jsonl is sure to be: what process isolation's faulty run is held to."""
    return shared_fault_runs(_shared_temp(tmp_path_factory, worker_id), ("clean",))
