"""The folders a run makes in the temporary folder, marked with the process that owns them, and the removal of those
whose owner is gone.

Why: a run removes its zygote's folder (`tcm-loader-*`) and its workers' folder (`tcm-workers-*`) when it ends, and the
zygote removes its own when it outlives its run. A run killed with its whole process group (SIGKILL, an out-of-memory
kill, a CI job cancelled) leaves both behind, one pair per killed run. The next run removes them, never one of a
process that may still be running:

- the owner is named by its pid, and by its PID namespace, the machine's boot and its host name, which say whether
  that pid means anything here (a container sharing this /tmp has pids of its own; a folder made before the machine
  last started has no process left);
- a folder without a mark (made by an older harness, or being made) and a zygote that is still alive are left alone:
  the zygote removes its folder itself once it sees its run gone.

A module of its own that imports nothing of the harness but the atomic write, so that the zygote's side
(harness.run.startup.loader_zygote) and the plugin's can both use it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from harness.atomic import write_text_atomic

OWNER_FILE = "owner.json"
PREFIXES = ("tcm-loader-", "tcm-workers-")
BOOT_ID = "/proc/sys/kernel/random/boot_id"
ZYGOTE_PID_FILE = "zygote.pid"  # harness.run.startup.zygote_client.PID_FILE (that module imports this one)


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def process_alive(pid: int) -> bool:
    """Whether `pid` may still be running: a pid the system says is unused, or a zombie (it has ended, and its
    parent has not reaped it: a container whose first process reaps nobody keeps them), is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or a pid this system cannot name: not known to be gone
    stat = _read(f"/proc/{pid}/stat")
    return not (stat and stat.rpartition(")")[2].split()[:1] == ["Z"])


def mark_owner(folder: Path, pid: int | None = None) -> None:
    """Name `pid` (this process by default) as the owner of `folder`, which it removes when its run ends."""
    owner = {"pid": pid or os.getpid(), "pid_namespace": _pid_namespace(),
             "boot_id": _read(BOOT_ID), "host": socket.gethostname()}
    write_text_atomic(folder / OWNER_FILE, json.dumps(owner), durable=False)


def read_owner(folder: Path) -> dict | None:
    """What `mark_owner` wrote in `folder`, its pid an int; None where there is no readable mark."""
    try:
        owner = json.loads((folder / OWNER_FILE).read_text())
        return {**owner, "pid": int(owner["pid"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def owner_gone(folder: Path) -> bool:
    """Whether the process that owns `folder` has certainly ended: False for a folder without a readable mark, for one
    marked on another host, and for one marked in another PID namespace of the same boot."""
    owner = read_owner(folder)
    if owner is None:
        return False
    if owner.get("host") != socket.gethostname():
        return False  # another machine's (a shared temporary folder): its pids mean nothing here
    boot = _read(BOOT_ID)
    if boot is not None and owner.get("boot_id") not in (None, boot):
        return True  # made before this machine last started: every process of that boot has ended
    if owner.get("pid_namespace") != _pid_namespace():
        return False
    return not process_alive(owner["pid"])


def zygote_pid(folder: Path) -> int | None:
    """The pid the zygote of `folder` wrote, if it started."""
    try:
        return int((folder / ZYGOTE_PID_FILE).read_text())
    except (OSError, ValueError):
        return None


def zygote_alive(folder: Path) -> bool:
    pid = zygote_pid(folder)
    return pid is not None and pid > 0 and process_alive(pid)


def user_run_folders(parents: Iterable[Path] | None = None) -> Iterator[Path]:
    """This user's run folders in `parents`: by default the temporary folder, and /tmp, where a zygote's folder goes
    when the temporary folder's path is too long for its socket (harness.run.startup.zygote_client.make_loader_dir)."""
    for parent in dict.fromkeys(parents or (Path(tempfile.gettempdir()), Path("/tmp"))):
        for prefix in PREFIXES:
            for folder in sorted(parent.glob(f"{prefix}*")):
                try:
                    if folder.is_dir() and not folder.is_symlink() and folder.stat().st_uid == os.getuid():
                        yield folder
                except OSError:
                    continue


def remove_dead_runs_folders(parents: Iterable[Path] | None = None) -> list[Path]:
    """Remove this user's run folders (user_run_folders) whose owner has ended and whose zygote, if any, too; returns
    those removed."""
    removed = []
    for folder in user_run_folders(parents):
        if owner_gone(folder) and not zygote_alive(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
