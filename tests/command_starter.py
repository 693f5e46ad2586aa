"""A Python that imported what `python -m harness` imports first (torch, the CLI, pytest and xdist) and forks each
of the suite's harness commands from it, as `python -m harness ARGS` would run them.

Why: the suite starts about 150 harness commands, and each new Python paid `import torch` and the CLI's imports,
2.5 CPU seconds each on two cores, before it did anything (docs/maintainers.md, "The harness's own tests"). The
client is tests/harness_commands.py, which starts one of these per environment (variables read when torch starts
differ from one environment to another), so a command starts with the environment a new Python would have had.

A forked command then becomes `python -m harness ARGS`: its folder, its whole environment (`tempfile` forgets the
folder it chose, for TMPDIR may differ), its stdin, stdout and stderr from and to files, `sys.argv` and `sys.path[0]`
as `-m` sets them; it runs `harness/__main__.py` as `__main__`, and then ends as Python ends, through this module's
own end: a `SystemExit` leaves through `main`, so Python's teardown runs (threads, atexit, flushing) and its exit
status is the command's, and an uncaught exception is printed with status 1.
Not forked from here: the catalogue's kernel modules (a command imports them itself) and what the harness starts
itself (its workers come from its zygote). A run's zygote and its cells' processes in process isolation are forked by
this starter's zygote maker (tests/zygote_maker.py), a child forked when the first of them is asked for on the socket
named as this script's argument, which then warms up once as a zygote does.

Protocol (tests/fork_server.py's): one JSON line per command on stdin, `{"id", "module", "argv", "cwd", "env",
"stdin", "stdout", "stderr"}` (`module`: what `-m` names, `harness` but in the starter's own tests; file paths;
`stdin` may be null: /dev/null); on stdout, when it is forked and when it has ended, as fork_server.serve says.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import NoReturn

import pytest  # noqa: F401  (what `harness run` imports besides torch and the CLI: the reason this process exists)
import torch  # noqa: F401
import xdist.dsession  # noqa: F401
import xdist.plugin  # noqa: F401
from fork_server import become_module, serve
from zygote_maker import serve as make_zygotes

import harness.cli  # noqa: F401


def _become_command(request: dict) -> NoReturn:
    """In the forked child: become `python -m MODULE ARGS` started in the request's folder; never returns."""
    if _zygotes.listener is not None:
        _zygotes.listener.close()
    streams = ((0, request["stdin"] or os.devnull, os.O_RDONLY),
               (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
               (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
    for descriptor, path, flags in streams:
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, descriptor)
        os.close(opened)
    become_module(request["module"], request["argv"], request["cwd"], request["env"])
    raise SystemExit(0)


class _Zygotes:
    """The socket the stand-ins connect to (tests/zygote_launcher.py), and the zygote maker it is handed to."""

    listener: socket.socket | None = None
    maker: int | None = None

    def hand_over(self, listener: socket.socket) -> None:
        """Fork the zygote maker at the first stand-in's knock; from then on it alone answers on the socket."""
        sys.stdout.flush()
        starter = os.getpid()
        pid = os.fork()
        if pid == 0:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)  # the commands' requests are the starter's to read
            make_zygotes(listener, starter)
        self.maker = pid
        listener.close()
        self.listener = None

    def end(self) -> None:
        if self.maker is not None:
            try:
                os.kill(self.maker, signal.SIGTERM)
            except ProcessLookupError:
                pass


_zygotes = _Zygotes()


def main(argv: list[str]) -> None:
    if argv:
        _zygotes.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        _zygotes.listener.bind(argv[0])
        _zygotes.listener.listen(64)
    serve(_become_command, listener=_zygotes.listener, hand_over=_zygotes.hand_over)  # a child leaves through SystemExit
    _zygotes.end()  # the client closed: no command, so no zygote, is left


if __name__ == "__main__":
    main(sys.argv[1:])
