"""How the harness's own long-lived Pythons end: as Python ends them, less the last full collection."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn


def exit_without_final_collection(code: int | None) -> NoReturn:
    """`sys.exit(code)` after `gc.freeze()`: Python's teardown still clears every module and runs atexit's
    functions, but its collections no longer walk the heap. Why: those collections take about 1.4 CPU seconds in
    a Python that imported torch and Inductor (a run's zygote, which its controller waits for) and 0.5 in one that
    imported torch (a `python -m harness` command): docs/maintainers.md, "Isolation". Only the finalizers of
    objects caught in reference cycles at exit are skipped, as os._exit would skip them all."""
    gc.freeze()
    sys.exit(code)
