"""A kernel whose raw launch kills its process at any size above 100: the perf runner must keep the small size."""

from __future__ import annotations

import dataclasses
import os
import signal

from kernels import add


def launch(wrap, x, y):
    if x.numel() > 100:
        os.kill(os.getpid(), signal.SIGKILL)
    return add.launch(wrap, x, y)


SPEC = dataclasses.replace(add.SPEC, name="perf_crash_at_large_size", launch=launch)
