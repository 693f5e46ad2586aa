"""The suite's zygote maker: a child of a command starter (tests/command_starter.py) that did a run's zygote warm-up
once and forks each zygote that a stand-in (tests/zygote_launcher.py) asks for.

Why: a run's zygote is a new Python that imports torch, Dynamo and Inductor and runs Inductor's CPU ISA probe
(harness.run.loader_zygote.warm_up), about 5 CPU seconds here, and the suite's runs start about 50 of them. A zygote
forked from here has done that warm-up already (its own, in `warm_up`, then finds it done): torch and the probe's
answer are imported and cached, nothing else, no kernel module, as in the zygote a new Python would have been.

What must match: the zygote's environment, but for the variables read after it starts (IGNORED below and every
TCM_* variable), must be this process's (the command starter's, with which torch was imported), and its tier the one
warmed for; otherwise the maker refuses and the stand-in starts a new Python, as the harness would have. A forked
zygote becomes `python -m harness.run.loader_zygote ARGS`: a session of its own (the harness starts it so), the
stand-in's stdin, stdout and stderr, folder and environment, `sys.argv` as `-m` sets them.

Protocol: the stand-in connects, sends one byte (b"Z") with its descriptors 0, 1 and 2, then one JSON line
`{"env", "cwd", "python_args"}`; the maker answers `{"pid": P}` or `{"refused": WHY}`, and, once the zygote has
ended, `{"returncode": N}` (N < 0: the signal that ended it). The zygote's CPU time (its own and its waited
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
from typing import Any, NoReturn

from fork_server import become_module

ZYGOTE_MODULE = "harness.run.loader_zygote"
# Read when a process uses them, not when it starts or imports torch: the controller names them per run (its caches,
# its folder), or pytest sets them while it runs (the controller's pytest session, the terminal's size; an xdist
# worker's PYTEST_XDIST_* names, in a process-isolation worker that starts a zygote for its loaders).
IGNORED = ("TMPDIR", "PYTEST_CURRENT_TEST", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "PYTEST_VERSION", "COLUMNS",
           "LINES")
# Read when Python starts, into `sys`: a forked zygote sets them there as a new Python would
# (harness.run.bytecode points a run's Pythons at a bytecode cache where the environment forbids one).
BYTECODE = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


def _start_time_variables(environment: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in environment.items()
            if not name.startswith(("TCM_", "PYTEST_XDIST_")) and name not in IGNORED + BYTECODE}


def refusal(request: dict[str, Any], own: dict[str, str], warmed_for: str | None) -> str | None:
    """Why this maker cannot fork the zygote asked for; None when it can."""
    python_args = request["python_args"]
    if python_args[:2] != ["-m", ZYGOTE_MODULE] or len(python_args) != 5:
        return f"not `-m {ZYGOTE_MODULE} DIR OWNER TIER`: {python_args!r}"
    if warmed_for not in (None, python_args[-1]):
        return f"warmed up for the {warmed_for} tier, asked for {python_args[-1]}"
    asked, mine = _start_time_variables(request["env"]), _start_time_variables(own)
    differing = sorted(name for name in asked.keys() | mine.keys() if asked.get(name) != mine.get(name))
    return f"the environment differs in {', '.join(differing)}" if differing else None


def _read_request(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    _, descriptors, _, _ = socket.recv_fds(connection, 1, 3)
    line = connection.makefile("rb").readline()
    return json.loads(line), descriptors


def _send(connection: socket.socket, message: dict[str, Any]) -> None:
    try:
        connection.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass  # its stand-in is gone: nobody to tell


def _went_away(connection: socket.socket) -> bool:
    """A stand-in only ever waits: a readable connection means it closed."""
    try:
        return not connection.recv(1)
    except OSError:
        return True


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _become_zygote(request: dict[str, Any], descriptors: list[int], others: list[socket.socket]) -> NoReturn:
    """In the forked child: become `python -m harness.run.loader_zygote ARGS` as the stand-in was started, in a session
    of its own as the harness starts it; never returns (the zygote leaves through its own exit)."""
    for other in others:
        other.close()
    os.setsid()
    for target, descriptor in zip((0, 1, 2), descriptors):
        os.dup2(descriptor, target)
        os.close(descriptor)
    become_module(ZYGOTE_MODULE, request["python_args"][2:], request["cwd"], request["env"])
    os._exit(0)


def serve(listener: socket.socket, starter_pid: int) -> NoReturn:
    """Answer the stand-ins until the command starter is gone and every zygote forked here has ended."""
    from harness.run import loader_zygote

    own = dict(os.environ)
    warmed_for: str | None = None
    running: dict[int, socket.socket] = {}
    while os.getppid() == starter_pid or running:
        readable = select.select([listener, *running.values()], [], [], 0.1)[0]
        for pid, connection in running.items():
            if connection in readable and _went_away(connection):
                _kill(pid)  # its stand-in is gone (SIGKILL, which it cannot pass on): so is the zygote
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
                loader_zygote.warm_up(request["python_args"][-1])
                os.environ.clear()
                os.environ.update(own)  # the warm-up entered the tier; the zygote gets the stand-in's environment
                warmed_for = request["python_args"][-1]
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _become_zygote(request, descriptors, [listener, connection, *running.values()])
            for descriptor in descriptors:
                os.close(descriptor)
            _send(connection, {"pid": pid})
            running[pid] = connection
        while running:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            connection = running.pop(pid, None)
            if connection is None:
                continue
            os.write(1, (json.dumps({"cpu_s": usage.ru_utime + usage.ru_stime}) + "\n").encode())
            _send(connection, {"returncode": os.waitstatus_to_exitcode(status)})
            connection.close()
    os._exit(0)
