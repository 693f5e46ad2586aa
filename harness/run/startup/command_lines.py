"""The command line that starts one of the harness's own new Pythons: the one a variable names, else this Python.

Two of the processes a run starts are new Pythons that a user may want started another way (under a wrapper, or
forked from a process that already imported torch, as the harness's own test suite does: tests/zygote_launcher.py):
a run's zygote (ZYGOTE_PYTHON_VARIABLE, harness.run.startup.loader_zygote) and a cell's process in process isolation
(CELL_PYTHON_VARIABLE, harness.run.isolation). The command line is split as a shell would split it and stands where
`python` would; the arguments after it are the harness's.
"""

from __future__ import annotations

import os
import shlex
import sys

ZYGOTE_PYTHON_VARIABLE = "TCM_ZYGOTE_PYTHON"
CELL_PYTHON_VARIABLE = "TCM_CELL_PYTHON"


def python_command(variable: str) -> list[str]:
    """The command line `variable` names (unset or empty: this Python)."""
    return shlex.split(os.environ.get(variable, "")) or [sys.executable]
