"""A run-wide limit on the fresh Pythons that run at once (the aoti_fresh_process and round-trip children).

Each such child makes its own CUDA context (a process forked from one that touched CUDA cannot use it, so none
can be inherited), and making a context gets slower the more processes hold one on the GPU: on the H100 the
round trips alone (444 cells) took 150 s with 16 workers and 106 s with 8, the children's loads 3.8 s against
1.2 s each (docs/maintainers.md, "Fresh processes at once"). So a worker takes one of a few slots, file locks
in the run's cache folder, before it starts a child, and the children of 16 workers make their contexts a few
at a time. The slots change only when a child starts, never what it does: no outcome depends on them.

A module that imports nothing of the harness but the run's cache folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from harness.run.caches import run_caches

SLOTS_VARIABLE = "TCM_FRESH_PROCESSES"  # how many fresh Pythons of a run may run at once; 0: no limit
DEFAULT_SLOTS = 4
POLL_S = 0.02


def slot_count() -> int:
    text = os.environ.get(SLOTS_VARIABLE, "")
    try:
        return max(0, int(text)) if text else DEFAULT_SLOTS
    except ValueError:
        return DEFAULT_SLOTS


@contextlib.contextmanager
def fresh_slot(folder: Path | None = None, slots: int | None = None) -> Iterator[float]:
    """Hold one of the run's slots while the body runs; yields the seconds waited for it. A process that dies
    holding one releases it (the kernel drops a dead process's locks)."""
    slots = slot_count() if slots is None else slots
    if slots == 0:
        yield 0.0
        return
    folder = (run_caches() / "fresh-slots") if folder is None else folder
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    first = os.getpid() % slots  # workers start at different slots, so they rarely try the same one first
    while True:
        for offset in range(slots):
            handle = open(folder / f"slot-{(first + offset) % slots}.lock", "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            try:
                yield round(time.perf_counter() - started, 3)
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()
            return
        time.sleep(POLL_S)
