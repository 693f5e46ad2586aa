"""Where a run keeps its caches: one folder per user, shared by runs, workers and every Python they start.

A module of its own that imports nothing of the harness, so that both the environment a run enters
(harness.run.environment) and the bytecode cache it turns on (harness.run.bytecode) can name the folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def caches_root() -> Path:
    """The per-user folder under which runs keep their caches: each worker's Inductor and Triton caches, bytecode."""
    return Path(tempfile.gettempdir()) / f"tcm-caches-{os.getuid()}"
