"""Which runs may share a kept zygote (harness.run.kept_zygote): the same Python, tier, harness sources and
environment but for what is set per run, and the same owner."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from harness.run import kept_zygote
from harness.run.kept_zygote import KEEP_ZYGOTE_VARIABLE, OWNER_VARIABLE, PER_RUN_VARIABLES, check_owner, zygote_key
from harness.run.loader_zygote import IDLE_FILE

BASE = {"PATH": "/usr/bin", "TORCHINDUCTOR_CACHE_DIR": "/kept/controller/inductor", "OMP_NUM_THREADS": "1"}


def test_what_is_set_per_run_does_not_change_the_key():
    per_run = {name: f"run-{index}" for index, name in enumerate(sorted(PER_RUN_VARIABLES))}
    assert zygote_key("cpu", BASE) == zygote_key("cpu", {**BASE, **per_run})
    assert zygote_key("cpu", BASE) == zygote_key("cpu", {**BASE, OWNER_VARIABLE: "123"}), "the owner names the folder"


@pytest.mark.parametrize("change", [{"TORCHINDUCTOR_CACHE_DIR": "/run-2/controller/inductor"},
                                    {"OMP_NUM_THREADS": "2"}, {"TRITON_INTERPRET": "1"}, {"PYTHONPATH": "/plug-ins"}])
def test_anything_else_in_the_environment_makes_another_zygote(change):
    assert zygote_key("cpu", BASE) != zygote_key("cpu", {**BASE, **change})


def test_the_tier_and_the_harness_sources_are_in_the_key(monkeypatch):
    assert zygote_key("cpu", BASE) != zygote_key("gpu", BASE)
    before = zygote_key("cpu", BASE)
    monkeypatch.setattr(kept_zygote, "source_fingerprint", lambda: [("run/cell.py", 1, 2)])
    assert zygote_key("cpu", BASE) != before, "an edited harness module gets a new zygote"


@pytest.fixture
def short_folder():
    """A folder short enough for a socket's path under it (AF_UNIX: 107 bytes); tmp_path may not be."""
    folder = Path(tempfile.mkdtemp(prefix="kz-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_kept_zygote_lives_in_a_folder_of_its_key_and_owner_and_leaves_when_idle(short_folder):
    environ = {**BASE, KEEP_ZYGOTE_VARIABLE: str(short_folder), OWNER_VARIABLE: "4242"}
    kept = kept_zygote.kept_zygote("cpu", environ)
    assert kept is not None and kept.owner_pid == 4242
    assert kept.directory == short_folder / f"{zygote_key('cpu', environ)}-4242"
    assert float((kept.directory / IDLE_FILE).read_text()) == kept_zygote.IDLE_S
    other_owner = kept_zygote.kept_zygote("cpu", {**environ, OWNER_VARIABLE: "4343"})
    assert other_owner is not None and other_owner.directory != kept.directory


def test_without_an_owner_named_the_runs_parent_owns_it(short_folder):
    kept = kept_zygote.kept_zygote("cpu", {**BASE, KEEP_ZYGOTE_VARIABLE: str(short_folder)})
    assert kept is not None and kept.owner_pid == os.getppid()


def test_not_asked_or_a_folder_too_long_for_a_socket_keeps_nothing(tmp_path):
    assert kept_zygote.kept_zygote("cpu", BASE) is None
    long_folder = tmp_path / ("x" * 120)
    assert kept_zygote.kept_zygote("cpu", {**BASE, KEEP_ZYGOTE_VARIABLE: str(long_folder)}) is None
    assert not long_folder.exists()


def test_an_owner_that_is_not_a_pid_is_one_line():
    assert check_owner({OWNER_VARIABLE: "123"}) == 123
    assert check_owner({}) is None
    with pytest.raises(ValueError, match=r"^TCM_KEEP_ZYGOTE_OWNER='me': expected the id of the process") as raised:
        check_owner({OWNER_VARIABLE: "me"})
    assert "\n" not in str(raised.value)
