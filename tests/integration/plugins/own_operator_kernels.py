"""A plug-in that defines an operator of its own at import (a new namespace, as a library registering its custom
ops does): that changes no existing operator, so the harness loads it (tests/integration/test_plugin_overrides.py)."""

import dataclasses

import torch

from kernels.add import SPEC as CATALOGUE_ADD


@torch.library.custom_op("tcm_test_own::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


SPEC = dataclasses.replace(CATALOGUE_ADD, name="own_operator_add")
