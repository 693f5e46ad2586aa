"""A kernel whose pure-PyTorch control fails under export and says which kind of process it ran in.

Its reference refuses to be exported (non-strict export runs it for real, so the refusal is the control's error),
and names how its process started: `python -m` puts the module it runs in `sys.argv[0]`, a new Python's
(`harness.run.isolation.cell_worker`) or the zygote's, which a child forked from it keeps (the suite's zygotes are themselves
forked, tests/zygote_maker.py, and set `sys.argv` as `-m` does, so their command line would not tell).
tests/integration/test_isolation_modes.py asks only `raw`, so the control that judges raw's failure is not in the
selection and runs apart (harness.plugin.pytest_plugin.judge_by_control).
"""

import dataclasses
import sys
from pathlib import Path

import torch

from kernels import add

REFUSAL = "this control refuses export"


def _how_started() -> str:
    started_as = Path(sys.argv[0]).as_posix()
    if started_as.endswith("harness/run/isolation/cell_worker.py"):
        return "a new Python"
    if started_as.endswith("harness/run/startup/loader_zygote.py"):
        return "a child forked from the run's zygote"
    return "elsewhere"


def reference(x, y):
    if torch.compiler.is_exporting():
        raise RuntimeError(f"{REFUSAL}; it ran in {_how_started()}")
    return x + y


SPECS = [dataclasses.replace(add.SPEC, name="broken_control", reference=reference,
                             description="add whose control refuses export (a test plug-in)")]
