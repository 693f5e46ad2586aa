"""A stand-in for `python` that has a run's zygote forked by the suite's zygote maker (tests/zygote_maker.py).

Why: each run's zygote is a new Python that imports torch, Dynamo and Inductor and runs Inductor's CPU ISA probe,
about 5 CPU seconds on two cores, and the suite starts about 50 of them (docs/maintainers.md, "The harness's own
tests"). The harness starts a zygote with the command line that TCM_ZYGOTE_PYTHON names
(harness.run.loader_zygote.zygote_python); tests/harness_commands.py names this script for the commands it forks.

Run as `python -I -S zygote_launcher.py SOCKET -m harness.run.loader_zygote ARGS...`. It hands its stdin, stdout and
stderr, its environment, its folder and its arguments to the maker listening on SOCKET, which forks the zygote from a
process that did that warm-up once (with the same environment but for the variables named in zygote_maker.py), and it
stays as the zygote's stand-in: the pid the harness recorded is this one, so it passes SIGTERM, SIGINT and SIGHUP on
and leaves with the zygote's exit status (a signal as the same signal). When the maker refuses (another environment)
or is not there, it becomes that new Python (exec), as the harness would have started it. The standard library only,
so that it starts in milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from typing import NoReturn

REQUEST = b"Z"
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _become_python(python_args: list[str], why: str) -> NoReturn:
    print(f"zygote_launcher: {why}; starting a new Python instead", file=sys.stderr, flush=True)
    for forwarded in FORWARDED:
        signal.signal(forwarded, signal.SIG_DFL)
    os.execv(sys.executable, [sys.executable, *python_args])


def _end_as(returncode: int) -> NoReturn:
    if returncode < 0:  # the zygote died of a signal: so does its stand-in
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    os._exit(returncode & 0xFF)


def main(argv: list[str]) -> NoReturn:
    address, python_args = argv[0], argv[1:]
    zygote: list[int] = []
    held: list[int] = []

    def pass_on(number: int, _frame: object) -> None:
        if zygote:
            os.kill(zygote[0], number)
        else:
            held.append(number)

    for forwarded in FORWARDED:
        signal.signal(forwarded, pass_on)
    request = {"env": dict(os.environ), "cwd": os.getcwd(), "python_args": python_args}
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(address)
        socket.send_fds(connection, [REQUEST], [0, 1, 2])
        connection.sendall((json.dumps(request) + "\n").encode())
        replies = connection.makefile("r")
        answer = json.loads(replies.readline() or "{}")
    except (OSError, ValueError) as exc:
        _become_python(python_args, f"no answer from the zygote maker at {address} ({type(exc).__name__}: {exc})")
    if "pid" not in answer:  # refused: another environment, or arguments it does not run
        _become_python(python_args, f"the zygote maker refused: {answer.get('refused', answer)}")
    zygote.append(answer["pid"])
    for number in held:
        os.kill(zygote[0], number)
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):  # the zygote holds them now: only its end must close them
        os.dup2(null, descriptor)
    while True:
        try:
            line = replies.readline()
            break
        except InterruptedError:
            continue
    _end_as(int(json.loads(line)["returncode"]) if line else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
