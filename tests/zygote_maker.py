"""The suite's zygote maker: a child of a command starter (tests/command_starter.py) that did a run's zygote warm-up
once and forks from there each of the harness's new Pythons that a stand-in (tests/zygote_launcher.py) asks for: a
run's zygote, or a cell's process in process isolation.

Why: a run's zygote is a new Python that imports torch, Dynamo and Inductor and runs Inductor's CPU ISA probe
(harness.run.startup.zygote_warmup.warm_up), about 5 CPU seconds here, and the suite's runs start about 50 of them; a cell in
process isolation (`python -m harness.run.isolation.cell_worker WORKDIR`) imports the same, about 3.5 CPU seconds, and the
suite's runs start about 50 of those too. A process forked from here has done that warm-up already: torch and the
probe's answer are imported and cached, nothing else, no kernel module, as in the new Python it stands for (a cell so
forked is what `forked` isolation's child is: harness.run.isolation).

What must match: the process's environment, but for the variables read after it starts (IGNORED below and every TCM_*
variable) and the thread count (THREADS below, which the forked process sets), must be this process's (the command
starter's, with which torch was imported), and its tier (the zygote's argument, the cell's request.json) the one
warmed for; otherwise the maker refuses and the stand-in starts a new Python, as the harness would have. A forked
process becomes `python -m MODULE ARGS`: a session of its own (the harness starts both so), the stand-in's stdin,
stdout and stderr, folder and environment, `sys.argv` as `-m` sets them. A stand-in that goes away (the harness kills
a timed-out cell's process group with SIGKILL, which a stand-in cannot pass on) takes its process with it: a zygote
alone, a cell's process with its group.

Protocol: the stand-in connects, sends one byte (b"Z") with its descriptors 0, 1 and 2, then one JSON line
`{"env", "cwd", "python_args"}`; the maker answers `{"pid": P}` or `{"refused": WHY}`, and, once the process has
ended, `{"returncode": N}` (N < 0: the signal that ended it). The process's CPU time (its own and its waited
children's) goes to the command starter's client as a line `{"cpu_s": S}` on the starter's stdout, so that the
test that ran the command counts it (tests/harness_commands.py).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from pathlib import Path
from typing import Any, NoReturn

from fork_server import become_module

from harness.run.startup.loader_zygote import went_away

ZYGOTE_MODULE = "harness.run.startup.loader_zygote"
CELL_MODULE = "harness.run.isolation.cell_worker"
# Read when a process uses them, not when it starts or imports torch: the controller names them per run (its caches,
# its folder), or pytest sets them while it runs (the controller's pytest session, the terminal's size; an xdist
# worker's PYTEST_XDIST_* names, in a process-isolation worker that starts a zygote for its loaders), or the harness
# sets it on entering the CPU tier (TRITON_INTERPRET: triton's knob and torch read it when a kernel is decorated or
# compiled, which no process forked here has done; a process-isolation worker passes it to its cells).
IGNORED = ("TMPDIR", "PYTEST_CURRENT_TEST", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "PYTEST_VERSION", "COLUMNS",
           "LINES", "TRITON_INTERPRET")
# Read when Python starts, into `sys`: a forked process sets them there as a new Python would
# (harness.run.bytecode points a run's Pythons at a bytecode cache where the environment forbids one).
BYTECODE = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
# Read when torch is imported: the size of PyTorch's intra-op pool, OpenMP's and MKL's. A run with several workers sets
# it for each of its processes (harness.run.environment.share_cores), so a process asked with another count than this
# one's is forked and sizes them with `torch.set_num_threads`, which sets all three, as a new Python would have them.
THREADS = "OMP_NUM_THREADS"


def _start_time_variables(environment: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in environment.items()
            if not name.startswith(("TCM_", "PYTEST_XDIST_")) and name not in IGNORED + BYTECODE + (THREADS,)}


def thread_count(request: dict[str, Any], own: dict[str, str]) -> int | None:
    """The thread count the forked process must set, where the one asked differs from this process's; None where
    they are the same."""
    asked = request["env"].get(THREADS)
    if asked == own.get(THREADS):
        return None
    if asked is None or not asked.isdigit() or int(asked) < 1:
        raise ValueError(f"the environment differs in {THREADS} ({asked!r}), which torch.set_num_threads cannot give")
    return int(asked)


def tier_of(request: dict[str, Any]) -> str | None:
    """The tier of the zygote or cell asked for; None when the arguments are neither's."""
    python_args = request["python_args"]
    if python_args[:2] == ["-m", ZYGOTE_MODULE] and len(python_args) == 5:
        return python_args[-1]
    if python_args[:2] == ["-m", CELL_MODULE] and len(python_args) == 3:
        try:
            return str(json.loads((Path(request["cwd"]) / python_args[2] / "request.json").read_text())["tier"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return None


def refusal(request: dict[str, Any], own: dict[str, str], warmed_for: str | None) -> str | None:
    """Why this maker cannot fork the process asked for; None when it can."""
    python_args, tier = request["python_args"], tier_of(request)
    if tier is None:
        return f"not `-m {ZYGOTE_MODULE} DIR OWNER TIER` nor `-m {CELL_MODULE} WORKDIR` (its request.json read): {python_args!r}"
    if warmed_for not in (None, tier):
        return f"warmed up for the {warmed_for} tier, asked for {tier}"
    asked, mine = _start_time_variables(request["env"]), _start_time_variables(own)
    differing = sorted(name for name in asked.keys() | mine.keys() if asked.get(name) != mine.get(name))
    if differing:
        return f"the environment differs in {', '.join(differing)}"
    try:
        thread_count(request, own)
    except ValueError as exc:
        return str(exc)
    return None


def _read_request(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    _, descriptors, _, _ = socket.recv_fds(connection, 1, 3)
    line = connection.makefile("rb").readline()
    return json.loads(line), descriptors


def _send(connection: socket.socket, message: dict[str, Any]) -> None:
    try:
        connection.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass  # its stand-in is gone: nobody to tell


def _kill(pid: int, group: bool) -> None:
    """SIGKILL to the process, or to its process group (it leads one: it called setsid)."""
    try:
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _become_asked(request: dict[str, Any], descriptors: list[int], others: list[socket.socket],
                  threads: int | None) -> NoReturn:
    """In the forked child: become `python -m MODULE ARGS` as the stand-in was started, in a session of its own as the
    harness starts it, with the thread count asked; never returns (the process leaves through its own exit)."""
    for other in others:
        other.close()
    os.setsid()
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    for target, descriptor in zip((0, 1, 2), descriptors):
        os.dup2(descriptor, target)
        os.close(descriptor)
    become_module(request["python_args"][1], request["python_args"][2:], request["cwd"], request["env"])
    os._exit(0)


def serve(listener: socket.socket, starter_pid: int) -> NoReturn:
    """Answer the stand-ins until the command starter is gone and every process forked here has ended."""
    from harness.run.startup import zygote_warmup

    own = dict(os.environ)
    warmed_for: str | None = None
    running: dict[int, socket.socket] = {}
    cells: set[int] = set()  # the running processes that are cells' (killed with their group)
    while os.getppid() == starter_pid or running:
        readable = select.select([listener, *running.values()], [], [], 0.1)[0]
        for pid, connection in running.items():
            if connection in readable and went_away(connection):
                _kill(pid, group=pid in cells)  # its stand-in is gone (SIGKILL, which it cannot pass on): so is it
        if listener in readable and os.getppid() == starter_pid:
            connection, _ = listener.accept()
            try:
                request, descriptors = _read_request(connection)
            except (OSError, ValueError):
                connection.close()
                continue
            why = refusal(request, own, warmed_for)
            if why is not None:
                for descriptor in descriptors:
                    os.close(descriptor)
                _send(connection, {"refused": why})
                connection.close()
                continue
            if warmed_for is None:
                warmed_for = tier_of(request)
                zygote_warmup.warm_up(warmed_for)
                os.environ.clear()
                os.environ.update(own)  # the warm-up entered the tier; each process gets its stand-in's environment
            sys.stdout.flush()
            sys.stderr.flush()
            threads = thread_count(request, own)
            pid = os.fork()
            if pid == 0:
                _become_asked(request, descriptors, [listener, connection, *running.values()], threads)
            for descriptor in descriptors:
                os.close(descriptor)
            _send(connection, {"pid": pid})
            running[pid] = connection
            if request["python_args"][1] == CELL_MODULE:
                cells.add(pid)
        while running:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            connection = running.pop(pid, None)
            cells.discard(pid)
            if connection is None:
                continue
            os.write(1, (json.dumps({"cpu_s": usage.ru_utime + usage.ru_stime}) + "\n").encode())
            _send(connection, {"returncode": os.waitstatus_to_exitcode(status)})
            connection.close()
    os._exit(0)
