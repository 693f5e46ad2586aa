"""In-place x += y under `@triton.autotune(restore_value=[...])`, so benchmarking does not add y many times."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import grid_1d, refuse_strided_target, two_random_vectors


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 512}, num_warps=8),
    ],
    key=["n_elements"],
    restore_value=["x_ptr"],
)
@triton.jit
def autotune_restore_value_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(x_ptr + offsets, x + y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> None:
    refuse_strided_target("autotune_restore_value", x)
    y = y.contiguous()
    n_elements = x.numel()
    wrap(autotune_restore_value_kernel)[grid_1d(n_elements)](x, y, n_elements)


def reference(x: torch.Tensor, y: torch.Tensor) -> None:
    x.add_(y)


SPEC = KernelSpec(
    name="autotune_restore_value",
    kernels=(autotune_restore_value_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=reference,
    make_inputs=two_random_vectors,
    num_outputs=0,
    mutates_args=("x",),
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=False,  # refuses a strided x (ValueError) rather than write the wrong elements
    features=("autotune", "mutation", "grid-lambda"),
    description="x += y in place, fp32, returns None; @triton.autotune with restore_value=['x_ptr']",
)
