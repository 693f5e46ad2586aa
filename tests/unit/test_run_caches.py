"""A run's caches are its own: the controller names them before the zygote or any worker starts, whatever the
environment named (importing Inductor writes torch's default folder into TORCHINDUCTOR_CACHE_DIR, and a run that
kept it shared it among all its workers; docs/maintainers.md, "Order independence")."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness.run.caches import (
    CACHE_VARIABLES,
    KEPT_CACHES_VARIABLE,
    RUN_CACHES_VARIABLE,
    run_caches,
    start_run_caches,
    use_caches_of,
)


def test_the_controller_names_caches_inside_the_run_folder_over_inherited_ones(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for variable, _ in CACHE_VARIABLES:
        monkeypatch.setenv(variable, str(tmp_path / "inherited" / variable))
    monkeypatch.delenv(RUN_CACHES_VARIABLE, raising=False)  # restored after the test, whatever start_run_caches set
    monkeypatch.delenv(KEPT_CACHES_VARIABLE, raising=False)
    folder = start_run_caches()
    assert folder.is_relative_to(tmp_path) and run_caches() == folder
    for variable, name in CACHE_VARIABLES:
        assert Path(os.environ[variable]) == folder / "controller" / name


def test_two_runs_started_by_one_process_get_two_folders(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for variable in (RUN_CACHES_VARIABLE, KEPT_CACHES_VARIABLE, *(variable for variable, _ in CACHE_VARIABLES)):
        monkeypatch.delenv(variable, raising=False)  # restored after the test, whatever start_run_caches set
    first = start_run_caches()
    second = start_run_caches()
    assert first != second


def test_a_kept_folder_holds_each_processs_caches_by_name(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    for variable in (RUN_CACHES_VARIABLE, *(variable for variable, _ in CACHE_VARIABLES)):
        monkeypatch.delenv(variable, raising=False)  # restored after the test, whatever start_run_caches set
    monkeypatch.setenv(KEPT_CACHES_VARIABLE, str(tmp_path / "kept"))
    folder = start_run_caches()
    assert Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]) == tmp_path / "kept" / "controller" / "inductor"
    use_caches_of("gw1")
    assert Path(os.environ["TRITON_CACHE_DIR"]) == tmp_path / "kept" / "gw1" / "triton"
    assert folder.is_relative_to(tmp_path / "tmp")  # the run's own folder is still made, and removed at its end
