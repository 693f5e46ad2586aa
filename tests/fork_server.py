"""The loop both starters of the suite run (tests/command_starter.py, tests/integration/script_starter.py): read one
JSON request per line on stdin, fork a child for each, say on stdout when it is forked and when it has ended.

Replies: `{"id", "pid"}` once forked; `{"id", "returncode", "cpu_s"}` once ended (`returncode` negative: the signal
that ended it; `cpu_s`: its CPU time and that of the children it waited for). Closing stdin ends the loop once every
child has ended. Imports only the standard library: script_starter.py runs isolated (`python -I`) and loads this file
by its path.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from collections.abc import Callable
from typing import NoReturn


def _report(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(become_child: Callable[[dict], NoReturn], poll_s: float = 0.05) -> None:
    """Fork `become_child(request)` for each request; it runs in the child and must not return."""
    running: dict[int, str] = {}
    pending = b""
    reading = True
    while reading or running:
        if reading and select.select([0], [], [], poll_s)[0]:
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
        while running:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            _report({"id": running.pop(pid), "returncode": os.waitstatus_to_exitcode(status),
                     "cpu_s": usage.ru_utime + usage.ru_stime})
