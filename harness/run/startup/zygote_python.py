"""A stand-in for `python` that gets its process forked from the run's zygote (harness.run.startup.loader_zygote).

Why: on torch 2.11 every new xdist worker pays `import torch` and Inductor's CPU ISA probe (10 child
Pythons that import torch) before its first compile: 57-64 s per worker on a busy H200 host, paid once
per worker, so twice the workers paid it twice (docs/maintainers.md, "Isolation"). pytest-xdist starts a
worker as `PYTHON -u -c CODE` with execnet's pipes as stdin and stdout; in worker isolation the
controller names this script as PYTHON. It hands its stdin, stdout and stderr, its environment and its
folder to the zygote, which forks a child that runs CODE with them (harness.run.startup.zygote_children.worker_child),
and it stays as that worker's stand-in: it passes SIGTERM, SIGINT and SIGHUP on, and leaves with the worker's exit
status (a signal as the same signal), so xdist sees what it would see of a Python of its own.

With no zygote to answer, it becomes that Python (exec), and says so on stderr.
Run as `python -I -S zygote_python.py DIR PYTHON_ARGS...`: the standard library only, nothing imported
from the harness, so that it starts in milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from typing import NoReturn

SOCKET = "zygote.sock"  # the zygote's socket in its folder (harness.run.startup.loader_zygote and its client use these two)
WORKER_REQUEST = b"W"  # a worker request's first byte
STARTED_VARIABLE = "TCM_WORKER_START"  # what the worker was started by: zygote or spawn


FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _become_python(python_args: list[str], why: str, name: str, fallback_env: dict[str, str]) -> NoReturn:
    for forwarded in FORWARDED:
        signal.signal(forwarded, signal.SIG_DFL)  # the new Python takes its signals itself
    print(f"{name}: {why}; starting a new Python instead", file=sys.stderr, flush=True)
    os.environ.update(fallback_env)
    os.execv(sys.executable, [sys.executable, *python_args])


def _code(python_args: list[str]) -> str | None:
    """CODE of `-u [-B] -c CODE`, the only form execnet uses; None for anything else."""
    flags = python_args[:-2]
    if len(python_args) < 2 or python_args[-2] != "-c" or any(flag not in ("-u", "-B") for flag in flags):
        return None
    return python_args[-1]


def stand_in(address: str, request_byte: bytes, request: dict, python_args: list[str], name: str,
             fallback_env: dict[str, str] | None = None, server: str = "zygote", child_kind: str = "worker") -> int:
    """Have the server listening on `address` fork the process that `python ARGS` would have been, and stand in for it;
    its exit status, or this process dies of the signal that ended it.

    The server gets `request_byte` with this process's stdin, stdout and stderr, then `request` as one JSON line; it
    answers `{"pid": P}` once it has forked (anything else: it refused, and `refused` may say why), then
    `{"returncode": N}` when the child has ended. Signals that come before the pid is known are passed on then.
    Where the server is not there, refuses or closes first, this process becomes `python ARGS` (exec) with
    `fallback_env` added, and says why on stderr, prefixed with `name` (`server` and `child_kind` name the two in
    its messages). This module's own `main` stands in for an xdist worker; the harness's test suite stands in for
    a run's zygote the same way (tests/zygote_launcher.py)."""
    fallback = fallback_env or {}
    child: list[int] = []  # its pid, once the server has forked it
    held: list[int] = []  # signals that came before that: passed on as soon as the pid is known

    def pass_on(number: int, _frame: object) -> None:
        if child:
            os.kill(child[0], number)
        else:
            held.append(number)

    for forwarded in FORWARDED:
        signal.signal(forwarded, pass_on)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(address)
    except OSError as exc:
        _become_python(python_args, f"no {server} at {address} ({type(exc).__name__}: {exc})", name, fallback)
    try:  # a server that refuses unread (a zygote whose warm-up started CUDA) resets: not an empty line
        socket.send_fds(connection, [request_byte], [0, 1, 2])
        connection.sendall((json.dumps(request) + "\n").encode())
        replies = connection.makefile("r")
        started = replies.readline()
    except OSError as exc:
        _become_python(python_args, f"the {server} closed without starting a {child_kind} ({type(exc).__name__}: {exc})",
                       name, fallback)
    if not started:
        _become_python(python_args, f"the {server} closed without starting a {child_kind}", name, fallback)
    answer = json.loads(started)
    if "pid" not in answer:
        _become_python(python_args, f"the {server} refused: {answer.get('refused', answer)}", name, fallback)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the child holds our stdin and stdout now (execnet's pipes for a worker): its exit alone must close them
    os.dup2(null, 1)
    child.append(int(answer["pid"]))
    for number in held:
        os.kill(child[0], number)
    ended = replies.readline()
    if not ended:
        print(f"{name}: the {server} closed before {child_kind} {child[0]} ended", file=sys.stderr, flush=True)
        return 1
    returncode = int(json.loads(ended)["returncode"])
    if returncode < 0:  # the signal that ended the child ends its stand-in too
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    return returncode


def main(argv: list[str]) -> int:
    directory, python_args = argv[0], argv[1:]
    spawned = {STARTED_VARIABLE: "spawn"}
    code = _code(python_args)
    if code is None:
        _become_python(python_args, f"arguments {python_args!r} are not `-u -c CODE`", "zygote_python", spawned)
    request = {"env": dict(os.environ, **{STARTED_VARIABLE: "zygote"}), "cwd": os.getcwd(), "code": code}
    return stand_in(os.path.join(directory, SOCKET), WORKER_REQUEST, request, python_args, "zygote_python", spawned)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
