"""A kernel that fails every other time a cell launches it, to make a real `flaky` cell under --repeat.

Each run of a cell is a process of its own, so the count lives on disk: TCM_FLAKY_DIR names
a folder, and each process that really launches appends one byte to its counter there. The
process that makes the count odd raises; the next one passes. Load with `--kernels-from`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from harness.domain.spec import identity_wrap
from kernels import add

_verdict: tuple[int, bool] | None = None  # (this process's count, whether it fails), decided on its first launch


def _count_this_process() -> tuple[int, bool]:
    global _verdict
    if _verdict is None:
        folder = os.environ.get("TCM_FLAKY_DIR")
        if not folder:
            raise RuntimeError("flaky_add needs TCM_FLAKY_DIR: a folder for its launch counter")
        counter = Path(folder) / "launches"
        with open(counter, "ab") as handle:
            handle.write(b"x")
        count = counter.stat().st_size
        _verdict = (count, count % 2 == 1)
    return _verdict


def launch(wrap, x, y):
    if wrap is identity_wrap:  # only real launches count: fake/meta probes stay harmless
        count, fails = _count_this_process()
        if fails:
            raise RuntimeError(f"flaky by design: launch process {count} of flaky_add fails, the next one passes")
    return add.launch(wrap, x, y)


SPECS = [dataclasses.replace(add.SPEC, name="flaky_add", launch=launch, description="fails every other run (--repeat test)")]
