"""How the harness's own long-lived Pythons end: as Python ends them, less the last full collection."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn


def exit_without_final_collection(code: int | None) -> NoReturn:
    """`sys.exit(code)` after `gc.freeze()`: Python's teardown still clears every module and runs atexit's
    functions, but its collections no longer walk the heap. Why: in a Python that imported torch and Inductor
    those collections take about 1.4 CPU seconds, paid by every run's zygote and controller and by every
    `python -m harness` command (docs/maintainers.md, "Isolation"). Only the finalizers of objects caught in
    reference cycles at exit are skipped, as os._exit would skip them all."""
    gc.freeze()
    sys.exit(code)
