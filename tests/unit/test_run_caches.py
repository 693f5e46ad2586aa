"""A run's caches are its own: the controller names them before the zygote or any worker starts, whatever the
environment named (importing Inductor writes torch's default folder into TORCHINDUCTOR_CACHE_DIR, and a run that
kept it shared it among all its workers; docs/maintainers.md, "Order independence")."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness.run.caches import CACHE_VARIABLES, RUN_CACHES_VARIABLE, run_caches, start_run_caches


def test_the_controller_names_caches_inside_the_run_folder_over_inherited_ones(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for variable, _ in CACHE_VARIABLES:
        monkeypatch.setenv(variable, str(tmp_path / "inherited" / variable))
    monkeypatch.delenv(RUN_CACHES_VARIABLE, raising=False)  # restored after the test, whatever start_run_caches set
    folder = start_run_caches()
    assert folder.is_relative_to(tmp_path) and run_caches() == folder
    for variable, name in CACHE_VARIABLES:
        assert Path(os.environ[variable]) == folder / "controller" / name


def test_two_runs_started_by_one_process_get_two_folders(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for variable in (RUN_CACHES_VARIABLE, *(variable for variable, _ in CACHE_VARIABLES)):
        monkeypatch.delenv(variable, raising=False)  # restored after the test, whatever start_run_caches set
    first = start_run_caches()
    second = start_run_caches()
    assert first != second
