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
    isa_probes_folder,
    keep_isa_probes,
    probe_outputs,
    run_caches,
    seed_isa_probes,
    seed_this_process,
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


def _probe_output(folder: Path, name: str, text: str = "extern \"C\" void __avx_chk_kernel() {}") -> Path:
    path = folder / name[1:3] / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_isa_probes_outputs_go_to_the_kept_folder_and_seed_the_next_runs_cache(monkeypatch, tmp_path):
    """The zygote's warm-up: seed its fresh Inductor folder from the kept outputs, probe, keep what the probe added."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    kept = isa_probes_folder("2.13.0+cpu")
    assert kept.is_relative_to(tmp_path) and kept != isa_probes_folder("2.11.0+cu130")
    first_run = tmp_path / "run-1" / "inductor"
    _probe_output(first_run, "cold.cpp", "a kernel a test compiled earlier in this folder")
    before = probe_outputs(first_run)
    _probe_output(first_run, "cabc.cpp")
    _probe_output(first_run, "cabc.so", "a library")
    _probe_output(first_run, "ckernel.cpp", "a cell's kernel, compiled while the probe ran")
    (first_run / "locks").mkdir()
    (first_run / "locks" / "cabc.lock").write_text("")  # torch's lock files stay where they were made
    assert keep_isa_probes(first_run, kept, before) == 2
    assert sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file()) == ["ab/cabc.cpp", "ab/cabc.so"]

    second_run = tmp_path / "run-2" / "inductor"
    assert seed_isa_probes(kept, second_run) == 2
    assert (second_run / "ab" / "cabc.so").read_text() == "a library"
    before = probe_outputs(second_run)
    _probe_output(second_run, "cxyz.cpp")  # another candidate, which the second run's probe built
    assert keep_isa_probes(second_run, kept, before) == 1  # only what the probe added
    assert not [p for p in kept.rglob("*partial*")], "a copy lands whole, under its own name"


def test_seeding_from_no_kept_folder_copies_nothing(tmp_path):
    assert seed_isa_probes(tmp_path / "never-made", tmp_path / "inductor") == 0


def test_a_process_that_is_not_the_zygotes_child_starts_from_the_kept_outputs_too(monkeypatch, tmp_path):
    """A worker of process isolation is a new Python: its Inductor folder, which the new Pythons of its cells
    inherit, is seeded as the zygote's is (harness.plugin.state)."""
    import torch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    _probe_output(isa_probes_folder(torch.__version__), "cabc.cpp")
    worker = tmp_path / "run-1" / "gw0" / "inductor"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(worker))
    assert seed_this_process() == 1 and (worker / "ab" / "cabc.cpp").is_file()
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    assert seed_this_process() == 0  # torch's default folder is not this run's to fill


def test_every_worker_of_a_run_seeds_the_caches_it_names(monkeypatch):
    """The plug-in's state names a worker's caches, then seeds them (harness.plugin.state.MatrixState)."""
    from types import SimpleNamespace

    from harness.plugin import state

    calls = []
    monkeypatch.setattr(state, "use_caches_of", lambda worker: calls.append(("caches of", worker)))
    monkeypatch.setattr(state, "seed_this_process", lambda: calls.append(("seeded",)) or 0)
    state.MatrixState._private_caches(SimpleNamespace(worker="gw0"))
    assert calls == [("caches of", "gw0"), ("seeded",)]
