"""Kernels for worker isolation's CUDA-error path, which the CPU tier can only imitate.

`fault_cuda_text` raises what a poisoned CUDA context raises ("CUDA error: an illegal memory
access..."), so a worker-mode worker must record the cell, then leave; `after_cuda` is an ordinary
kernel that runs after it and must land in a fresh worker. Like a real fault, it poisons the process:
every later `torch.manual_seed` there raises too, as the GPU's seeding does after an illegal access
(measured on the H100: a control run in that worker died in `torch.cuda.manual_seed_all`).
"""

from __future__ import annotations

import dataclasses

import torch

from harness.domain.spec import identity_wrap
from kernels import add

POISONED = "CUDA error: an illegal memory access was encountered (imitated on the CPU tier)"


def _poisoned_seed(*args, **kwargs):
    raise RuntimeError(POISONED + "; this process's context is poisoned")


def _launch(wrap, x, y):
    if wrap is identity_wrap and not torch.compiler.is_compiling():
        torch.manual_seed = _poisoned_seed  # what every later cell in this process meets first
        raise RuntimeError(POISONED)
    return add.launch(wrap, x, y)


SPECS = [
    dataclasses.replace(add.SPEC, name="fault_cuda_text", launch=_launch, description="imitates a CUDA error"),
    dataclasses.replace(add.SPEC, name="after_cuda"),
]
