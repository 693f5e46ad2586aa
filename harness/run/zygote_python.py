"""A stand-in for `python` that gets its process forked from the run's zygote (harness.run.loader_zygote).

Why: on torch 2.11 every new xdist worker pays `import torch` and Inductor's CPU ISA probe (10 child
Pythons that import torch) before its first compile: 57-64 s per worker on a busy H200 host, paid once
per worker, so twice the workers paid it twice (docs/maintainers.md, "Isolation"). pytest-xdist starts a
worker as `PYTHON -u -c CODE` with execnet's pipes as stdin and stdout; in worker isolation the
controller names this script as PYTHON. It hands its stdin, stdout and stderr, its environment and its
folder to the zygote, which forks a child that runs CODE with them (`_worker_child`), and it stays as
that worker's stand-in: it passes SIGTERM, SIGINT and SIGHUP on, and leaves with the worker's exit
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

SOCKET = "zygote.sock"  # the zygote's socket in its folder (harness.run.loader_zygote uses these two)
WORKER_REQUEST = b"W"  # a worker request's first byte
STARTED_VARIABLE = "TCM_WORKER_START"  # what the worker was started by: zygote or spawn


def _become_python(python_args: list[str], why: str) -> NoReturn:
    for forwarded in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(forwarded, signal.SIG_DFL)  # the new Python takes its signals itself
    print(f"zygote_python: {why}; starting a new Python instead", file=sys.stderr, flush=True)
    os.environ[STARTED_VARIABLE] = "spawn"
    os.execv(sys.executable, [sys.executable, *python_args])


def _code(python_args: list[str]) -> str | None:
    """CODE of `-u [-B] -c CODE`, the only form execnet uses; None for anything else."""
    flags = python_args[:-2]
    if len(python_args) < 2 or python_args[-2] != "-c" or any(flag not in ("-u", "-B") for flag in flags):
        return None
    return python_args[-1]


def main(argv: list[str]) -> int:
    directory, python_args = argv[0], argv[1:]
    worker: list[int] = []  # its pid, once the zygote has forked it
    held: list[int] = []  # signals that came before that: passed on as soon as the pid is known

    def pass_on(number: int, _frame: object) -> None:
        if worker:
            os.kill(worker[0], number)
        else:
            held.append(number)

    for forwarded in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(forwarded, pass_on)
    code = _code(python_args)
    if code is None:
        _become_python(python_args, f"arguments {python_args!r} are not `-u -c CODE`")
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(os.path.join(directory, SOCKET))
    except OSError as exc:
        _become_python(python_args, f"no zygote in {directory} ({type(exc).__name__}: {exc})")
    environment = dict(os.environ, **{STARTED_VARIABLE: "zygote"})
    request = {"env": environment, "cwd": os.getcwd(), "code": code}
    try:  # a zygote that refused to fork (its warm-up started CUDA) exits unread: a reset, not an empty line
        socket.send_fds(connection, [WORKER_REQUEST], [0, 1, 2])
        connection.sendall((json.dumps(request) + "\n").encode())
        replies = connection.makefile("r")
        started = replies.readline()
    except OSError as exc:
        _become_python(python_args, f"the zygote closed without starting a worker ({type(exc).__name__}: {exc})")
    if not started:
        _become_python(python_args, "the zygote closed without starting a worker")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the worker holds execnet's pipes now: its exit alone must close them
    os.dup2(null, 1)
    worker.append(int(json.loads(started)["pid"]))
    for number in held:
        os.kill(worker[0], number)
    ended = replies.readline()
    if not ended:
        print(f"zygote_python: the zygote closed before worker {worker[0]} ended", file=sys.stderr, flush=True)
        return 1
    returncode = int(json.loads(ended)["returncode"])
    if returncode < 0:  # the signal that ended the worker ends its stand-in too
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    return returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
