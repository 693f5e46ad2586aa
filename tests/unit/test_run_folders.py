"""A run removes the folders of runs killed before they could (harness.run.run_folders), and never one that a live
process, another container's or an unmarked one may still use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from harness.run import run_folders
from harness.run.run_folders import OWNER_FILE, mark_owner, owner_gone, remove_dead_runs_folders


def _ended_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _folder(parent: Path, name: str, pid: int | None = None, **changes: str) -> Path:
    folder = parent / name
    folder.mkdir()
    if pid is not None:
        mark_owner(folder, pid)
        owner = json.loads((folder / OWNER_FILE).read_text())
        (folder / OWNER_FILE).write_text(json.dumps({**owner, **changes}))
    (folder / "current.json").write_text("{}")  # what a killed worker leaves
    return folder


def test_only_the_folders_of_owners_that_have_certainly_ended_are_removed(tmp_path):
    ended = _ended_pid()
    dead = _folder(tmp_path, "tcm-workers-dead", ended)
    dead_loader = _folder(tmp_path, "tcm-loader-dead", ended)
    rebooted = _folder(tmp_path, "tcm-loader-rebooted", os.getpid(), boot_id="an earlier boot")
    kept = {
        "live": _folder(tmp_path, "tcm-workers-live", os.getpid()),
        "unmarked": _folder(tmp_path, "tcm-workers-unmarked"),
        "another container": _folder(tmp_path, "tcm-workers-container", ended, pid_namespace="pid:[1]"),
        "another machine": _folder(tmp_path, "tcm-loader-elsewhere", ended, boot_id="x", host="another-host"),
        "not a run's": _folder(tmp_path, "tcm-caches-dead", ended),
    }
    live_zygote = _folder(tmp_path, "tcm-loader-zygote", ended)
    (live_zygote / run_folders.ZYGOTE_PID_FILE).write_text(str(os.getpid()))  # it removes its folder itself
    kept["zygote alive"] = live_zygote

    assert sorted(remove_dead_runs_folders([tmp_path])) == sorted([dead, dead_loader, rebooted])
    assert not dead.exists() and not dead_loader.exists() and not rebooted.exists()
    assert {why: folder.exists() for why, folder in kept.items()} == {why: True for why in kept}


def test_a_mark_names_this_process_and_a_torn_one_is_left_alone(tmp_path):
    folder = tmp_path / "tcm-workers-x"
    folder.mkdir()
    mark_owner(folder)
    owner = json.loads((folder / OWNER_FILE).read_text())
    assert owner["pid"] == os.getpid() and not owner_gone(folder)
    (folder / OWNER_FILE).write_text('{"pid": ')
    assert not owner_gone(folder)


def test_the_loader_zygotes_folder_is_marked_by_the_process_that_made_it():
    from harness.run.startup import zygote_client

    directory = zygote_client.make_loader_dir()
    try:
        assert json.loads((directory / OWNER_FILE).read_text())["pid"] == os.getpid()
        assert zygote_client.PID_FILE == run_folders.ZYGOTE_PID_FILE
    finally:
        zygote_client.stop(directory)
    assert not directory.exists()


def test_a_zombie_is_a_process_that_has_ended():
    """An ended child its parent has not reaped still answers os.kill(pid, 0): its run has ended all the same."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 30
        while Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child did not end"
            time.sleep(0.01)
        os.kill(child.pid, 0)  # it is still there
        assert not run_folders.process_alive(child.pid)
    finally:
        child.wait()
    assert run_folders.process_alive(os.getpid())
