"""`add`, as a plug-in whose behaviour a test sets from outside, to drive the confirmation of changed cells.

With TCM_CHANGE_MODE=ok the kernels are the real `add` (the run a baseline is written from). With `faults`:
- `transient_add`: the first process that launches it raises, every later one passes (TCM_CHANGE_DIR holds the
  marker that says a process already failed): a fault that a re-run in a new process does not see again;
- `changed_add` (and `also_changed_add`, the same): every launch returns x + y + 1, a result that really changed
  (always `wrong`). With TCM_CHANGE_SLEEP_S, a process of its own (`python -m harness.run.isolation.cell_worker`:
  a confirmation's try) sleeps that long at its first launch and appends `pid start end` to TCM_CHANGE_DIR/tries.log:
  when the tries ran.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

from harness.domain.spec import identity_wrap
from kernels import add

_fails_here: bool | None = None  # decided on this process's first launch


def _first_process_to_launch() -> bool:
    global _fails_here
    if _fails_here is None:
        marker = Path(os.environ["TCM_CHANGE_DIR"]) / "failed-once"
        try:
            marker.open("x").close()
            _fails_here = True
        except FileExistsError:
            _fails_here = False
    return _fails_here


def _faults() -> bool:
    return os.environ.get("TCM_CHANGE_MODE", "ok") == "faults"


def launch_transient(wrap, x, y):
    if wrap is identity_wrap and _faults() and _first_process_to_launch():
        raise RuntimeError("transient by design: the first process to launch transient_add fails, later ones pass")
    return add.launch(wrap, x, y)


_slept = False


def _sleep_once_in_a_try() -> None:
    """In a confirmation's try (a cell's own interpreter), hold the first launch and log when it ran."""
    global _slept
    seconds = float(os.environ.get("TCM_CHANGE_SLEEP_S", "0"))
    if _slept or not seconds or not sys.argv[0].endswith("cell_worker.py"):
        return
    _slept = True
    start = time.time()
    time.sleep(seconds)
    with open(Path(os.environ["TCM_CHANGE_DIR"]) / "tries.log", "a") as log:
        log.write(f"{os.getpid()} {start} {time.time()}\n")


def launch_changed(wrap, x, y):
    if _faults():
        _sleep_once_in_a_try()
    out = add.launch(wrap, x, y)
    return out + 1 if _faults() else out


SPECS = [dataclasses.replace(add.SPEC, name="transient_add", launch=launch_transient,
                             description="add that fails once with TCM_CHANGE_MODE=faults (confirmation tests)"),
         dataclasses.replace(add.SPEC, name="changed_add", launch=launch_changed,
                             description="add that is wrong with TCM_CHANGE_MODE=faults (confirmation tests)"),
         dataclasses.replace(add.SPEC, name="also_changed_add", launch=launch_changed,
                             description="changed_add again: two changed cells to confirm at once")]
