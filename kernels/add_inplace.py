"""In-place x += y: a kernel that writes one of its inputs and returns nothing."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, refuse_strided_target, two_random_vectors


@triton.jit
def add_inplace_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(x_ptr + offsets, x + y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> None:
    refuse_strided_target("add_inplace", x)
    y = y.contiguous()
    n_elements = x.numel()
    wrap(add_inplace_kernel)[grid_1d(n_elements)](x, y, n_elements, BLOCK_SIZE=BLOCK_SIZE)


def reference(x: torch.Tensor, y: torch.Tensor) -> None:
    x.add_(y)


SPEC = KernelSpec(
    name="add_inplace",
    kernels=(add_inplace_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=reference,
    make_inputs=two_random_vectors,
    num_outputs=0,
    mutates_args=("x",),
    flops=lambda x_shape, y_shape: x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=False,  # refuses a strided x (ValueError) rather than write the wrong elements
    features=("mutation", "grid-lambda", "constexpr-kwarg"),
    description="x += y in place, fp32, returns None (mutates_args=('x',)); no backward",
)
