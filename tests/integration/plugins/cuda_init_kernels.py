"""A plug-in that initialises CUDA in its module body, as libraries that query or allocate on the GPU at import do.

`cuda_init_add` is the built-in `add` under another name; the harness must give it the same verdicts as `add`
on the GPU (tests/integration/test_plugin_safety.py). On a machine without CUDA the import does nothing more.
"""

import dataclasses

import torch

from kernels import add

if torch.cuda.is_available():
    torch.cuda.init()
    _ALLOCATED_AT_IMPORT = torch.empty(1, device="cuda")

SPEC = dataclasses.replace(add.SPEC, name="cuda_init_add")
