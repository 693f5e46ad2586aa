"""A plug-in that replaces an aten kernel when imported, as `flag_gems.enable()` at the top of a spec module would:
from then on `torch.add`, the native control of every add-like kernel, runs the plug-in's code. The harness refuses
it at load (tests/integration/test_plugin_overrides.py)."""

import dataclasses

import torch

from kernels.add import SPEC as CATALOGUE_ADD

_LIBRARY = torch.library.Library("aten", "IMPL")  # kept alive, as FlagGems keeps its aten_lib
_LIBRARY.impl("add.Tensor", lambda a, b, alpha=1: a.new_zeros(torch.broadcast_shapes(a.shape, b.shape)), "CPU")

SPEC = dataclasses.replace(CATALOGUE_ADD, name="overriding_add")
