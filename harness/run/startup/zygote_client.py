"""The client's side of the run's zygote (harness.run.startup.loader_zygote): its folder, starting it, asking it for a
loader, and ending it.

- The controller makes the folder (`make_loader_dir`), starts the zygote itself when workers are to be forked from
  it (`ensure_started`), reads how long its warm-up took (`read_warmup`), and ends it (`stop`, which also waits for
  it when this process started it).
- A cell asks for a loader with `run_loader(DIR, OWNER_PID, TIER, MODULE, argv, env, timeout_s, log)`, which starts
  the zygote if none is alive (under a file lock: many workers may ask at once).
This module imports nothing of torch: the controller and the workers' cells import it before any torch work.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.run.run_folders import ZYGOTE_PID_FILE, mark_owner, process_alive, zygote_pid
from harness.run.startup.command_lines import ZYGOTE_PYTHON_VARIABLE, python_command
from harness.run.startup.zygote_python import SOCKET  # the stand-in defines it: it imports nothing else of ours

PID_FILE, LOCK, LOG = ZYGOTE_PID_FILE, "start.lock", "zygote.log"
WARMUP_FILE = "warmup.json"  # how long the warm-up took and when it ended, for the run's header
LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE = "TCM_LOADER_DIR", "TCM_LOADER_OWNER"  # set by the plugin in a zygote run
START_TIMEOUT_S = 60.0  # from starting the zygote to its socket being there (it binds before importing torch)
LOADER_REQUEST = b"L"  # a request's first byte; a worker's is WORKER_REQUEST and carries its stdin, stdout and stderr
REPLY_GRACE_S = 600.0  # past the loader's own limit (the warm-up counts in the first); the cell's limit comes first
LOG_TAIL_CHARS = 300
FORKED_AHEAD = "zygote, forked ahead"  # FreshRun.how of a loader that made its CUDA context before its request
SOCKET_PATH_LIMIT = 107  # AF_UNIX's sun_path on Linux holds 108 bytes, the last one a NUL


class ZygoteUnavailable(RuntimeError):
    """No zygote answered; the message carries the tail of its log."""


@dataclass
class LoaderRun:
    returncode: int
    timed_out: bool
    zygote_pid: int
    forked_ahead: bool = False  # a ready loader took it: forked, and its CUDA context made, before the request
    pid: int | None = None  # the loader's own
    reaped_at: float | None = None  # time.time() when the zygote saw it end


# ---- the controller's side ----

def make_loader_dir() -> Path:
    """A fresh folder for this run's zygote, in /tmp when the temporary folder's path is too long for a socket's."""
    parent = tempfile.gettempdir()
    if len(os.path.join(parent, "tcm-loader-12345678", f"{SOCKET}.{'9' * 10}")) > SOCKET_PATH_LIMIT:
        parent = "/tmp"
    directory = Path(tempfile.mkdtemp(prefix="tcm-loader-", dir=parent))
    mark_owner(directory)  # a later run removes it if this run is killed with its zygote (harness.run.run_folders)
    return directory


def stop(directory: Path) -> None:
    """End this run's zygote, if one started, and remove its folder."""
    pid = zygote_pid(directory)
    if pid is not None:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        _reap(pid)
    shutil.rmtree(directory, ignore_errors=True)


def _reap(pid: int, timeout_s: float = 30.0) -> None:
    """Wait for the zygote when this process started it: its CPU time (the forked workers' and loaders' with it)
    then counts in this process's children's, which is what `harness bench` measures."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] != 0:
                return
        except ChildProcessError:  # another process started it (a worker, for its loads): nothing to wait for
            return
        time.sleep(0.05)


# ---- the client's side ----

def _log_tail(directory: Path) -> str:
    try:
        text = (directory / LOG).read_text(errors="replace").strip()
    except OSError:
        return ""
    return text[-LOG_TAIL_CHARS:].replace("\n", " | ")


def ensure_started(directory: Path, owner_pid: int, tier: str) -> int:
    """The pid of this run's zygote; starts it when none is alive. Safe to call from many processes at once."""
    with open(directory / LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pid = zygote_pid(directory)
        if pid is not None and process_alive(pid) and (directory / SOCKET).exists():
            return pid
        (directory / SOCKET).unlink(missing_ok=True)
        with open(directory / LOG, "a") as log:
            process = subprocess.Popen(
                [*python_command(ZYGOTE_PYTHON_VARIABLE), "-m", "harness.run.startup.loader_zygote", str(directory),
                 str(owner_pid), tier],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives the (forked) cell that started it; the owner's end ends it
            )
        (directory / PID_FILE).write_text(str(process.pid))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (directory / SOCKET).exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise ZygoteUnavailable(f"the loader zygote did not start (exit {process.poll()}): {_log_tail(directory)}")
            time.sleep(0.05)
        return process.pid


def run_loader(directory: Path, owner_pid: int, tier: str, module: str, argv: list[str], env: dict[str, str],
               timeout_s: float, log: Path) -> LoaderRun:
    """Have the zygote fork a loader that runs `module`'s `main(argv)` and wait for its exit status.

    A zygote that died without removing its socket (killed) refuses the connection: it is started again, once."""
    job = {"module": module, "argv": argv, "env": env, "timeout_s": timeout_s, "log": str(log)}
    request = LOADER_REQUEST + (json.dumps(job) + "\n").encode()
    for attempt in (1, 2):
        pid = ensure_started(directory, owner_pid, tier)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout_s + REPLY_GRACE_S)
            try:
                connection.connect(str(directory / SOCKET))
            except ConnectionRefusedError:
                if attempt == 1:
                    (directory / SOCKET).unlink(missing_ok=True)  # so that ensure_started starts a new one
                    continue
                raise ZygoteUnavailable(f"the loader zygote (pid {pid}) refused the connection: "
                                        f"{_log_tail(directory)}") from None
            try:
                connection.sendall(request)
                reply = connection.makefile("r").readline()
            except OSError as exc:
                raise ZygoteUnavailable(f"the loader zygote (pid {pid}) did not answer: {type(exc).__name__}: "
                                        f"{exc}; {_log_tail(directory)}") from None
        if not reply:
            raise ZygoteUnavailable(f"the loader zygote (pid {pid}) closed without an answer: {_log_tail(directory)}")
        answer = json.loads(reply)
        return LoaderRun(int(answer["returncode"]), bool(answer["timed_out"]), pid, bool(answer.get("ready", False)),
                         answer.get("pid"), answer.get("reaped_at"))
    raise AssertionError("unreachable")


def read_warmup(directory: Path) -> dict[str, float] | None:
    """What `record_warmup` wrote, or None when no zygote of this run has finished its warm-up."""
    try:
        return json.loads((directory / WARMUP_FILE).read_text())
    except (OSError, ValueError):
        return None
