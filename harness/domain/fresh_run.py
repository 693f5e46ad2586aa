"""What a fresh Python did: a record of its own, so that the run can make one without importing torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FreshRun:
    """What a fresh Python did (CellContext.fresh_python): made by the run (harness.run.fresh_python) or a reproducer."""

    returncode: int  # negative: the signal that ended it
    output: str  # its stdout and stderr
    how: str  # "zygote", "zygote, forked ahead" (its CUDA context made before the request) or "spawn"
