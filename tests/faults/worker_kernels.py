"""Kernels for worker isolation's CUDA-error path, which the CPU tier can only imitate.

`fault_cuda_text` raises what a poisoned CUDA context raises ("CUDA error: an illegal memory
access..."), so a worker-mode worker must record the cell, then leave; `after_cuda` is an ordinary
kernel that runs after it and must land in a fresh worker.
"""

from __future__ import annotations

import dataclasses

import torch

from harness.spec import identity_wrap
from kernels import add


def _launch(wrap, x, y):
    if wrap is identity_wrap and not torch.compiler.is_compiling():
        raise RuntimeError("CUDA error: an illegal memory access was encountered (imitated on the CPU tier)")
    return add.launch(wrap, x, y)


SPECS = [
    dataclasses.replace(add.SPEC, name="fault_cuda_text", launch=_launch, description="imitates a CUDA error"),
    dataclasses.replace(add.SPEC, name="after_cuda"),
]
