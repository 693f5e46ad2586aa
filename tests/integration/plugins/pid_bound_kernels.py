"""A plug-in that refuses to work in any process but the one that imported it, as a library with a runtime does.

Libraries that set up a runtime at import (a CUDA context, a thread pool, a handle keyed by pid) fail in a
forked child. `pid_bound_add` is the built-in `add` whose launch raises in such a child; the harness must give it
the same verdicts as `add` (tests/integration/test_plugin_safety.py).
"""

import dataclasses
import os

from kernels import add

IMPORTED_BY = os.getpid()


def launch(wrap, x, y):
    if os.getpid() != IMPORTED_BY:
        raise RuntimeError(f"this library was imported by process {IMPORTED_BY} and cannot run in process {os.getpid()}")
    return add.launch(wrap, x, y)


SPEC = dataclasses.replace(add.SPEC, name="pid_bound_add", launch=launch)
