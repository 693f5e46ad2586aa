"""A kernel whose pure-PyTorch control fails under export and says which kind of process it ran in.

Its reference refuses to be exported (non-strict export runs it for real, so the refusal is the control's error),
and names how its process started: a new Python's command line names the module it runs, a child forked from the
run's zygote keeps the zygote's. tests/integration/test_isolation_modes.py asks only `raw`, so the control that
judges raw's failure is not in the selection and runs apart (harness.plugin.pytest_plugin.judge_by_control).
"""

import dataclasses

import torch

from kernels import add

REFUSAL = "this control refuses export"


def _how_started() -> str:
    with open("/proc/self/cmdline", "rb") as handle:
        command_line = handle.read().replace(b"\0", b" ").decode(errors="replace")
    if "harness.run.cell_worker" in command_line:
        return "a new Python"
    if "harness.run.loader_zygote" in command_line:
        return "a child forked from the run's zygote"
    return "elsewhere"


def reference(x, y):
    if torch.compiler.is_exporting():
        raise RuntimeError(f"{REFUSAL}; it ran in {_how_started()}")
    return x + y


SPECS = [dataclasses.replace(add.SPEC, name="broken_control", reference=reference,
                             description="add whose control refuses export (a test plug-in)")]
