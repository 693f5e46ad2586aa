"""The loop both starters of the suite run (tests/command_starter.py, tests/integration/script_starter.py): read one
JSON request per line on stdin, fork a child for each, say on stdout when it is forked and when it has ended; and
what a forked child does to become `python -m MODULE` (`become_module`: the command starter's commands, the zygote
maker's zygotes).

Replies: `{"id", "pid"}` once forked; `{"id", "returncode", "cpu_s"}` once ended (`returncode` negative: the signal
that ended it; `cpu_s`: its CPU time and that of the children it waited for). Closing stdin ends the loop once every
child has ended. Imports only the standard library: script_starter.py runs isolated (`python -I`) and loads this file
by its path.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time
from collections.abc import Callable
from typing import NoReturn


def _report(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(become_child: Callable[[dict], NoReturn], poll_s: float = 0.05, listener: socket.socket | None = None,
          hand_over: Callable[[socket.socket], None] | None = None) -> None:
    """Fork `become_child(request)` for each request; it runs in the child and must not return.

    With a `listener`, the first time it is readable `hand_over(listener)` is called, and it is not watched again
    (tests/command_starter.py hands it to a zygote maker it forks then). Children this loop did not fork for a request
    (that maker) are reaped without a reply."""
    running: dict[int, str] = {}
    pending = b""
    reading = True
    while reading or running:
        watched = [0] if listener is None else [0, listener]
        readable = select.select(watched, [], [], poll_s)[0] if reading else []
        if listener is not None and listener in readable and hand_over is not None:
            hand_over(listener)
            listener = None
        if 0 in readable:
            chunk = os.read(0, 1 << 16)
            reading = bool(chunk)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                sys.stdout.flush()
                pid = os.fork()
                if pid == 0:
                    become_child(request)
                running[pid] = request["id"]
                _report({"id": request["id"], "pid": pid})
        elif not reading:
            time.sleep(poll_s)
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in running:
                _report({"id": running.pop(pid), "returncode": os.waitstatus_to_exitcode(status),
                         "cpu_s": usage.ru_utime + usage.ru_stime})


def become_module(module: str, argv: list[str], cwd: str, env: dict[str, str]) -> None:
    """In a forked child: run `python -m MODULE ARGV` as a new Python started in `cwd` with `env` would, in this process.

    Its folder, its whole environment (`tempfile` forgets the folder it chose, for TMPDIR may differ), what Python reads
    into `sys` as it starts (the bytecode settings), and `sys.argv` and `sys.path[0]` as `-m` sets them; the module
    runs as `__main__`. Returns when the module returns; a `SystemExit` it raises goes on to the caller."""
    import runpy
    import tempfile

    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    sys.pycache_prefix = os.environ.get("PYTHONPYCACHEPREFIX") or None
    sys.argv = ["-m", *argv]
    sys.path[0] = os.getcwd()
    runpy.run_module(module, run_name="__main__", alter_sys=True)
