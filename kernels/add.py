"""The tutorial's vector add ("Using User-Defined Triton Kernels with torch.compile")."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, two_random_vectors


@triton.jit
def add_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(add_kernel)[grid_1d(n_elements)](x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


SPEC = KernelSpec(
    name="add",
    kernels=(add_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.add,
    make_inputs=two_random_vectors,
    flops=lambda x_shape, y_shape: x_shape.numel(),
    features=("grid-lambda", "constexpr-kwarg"),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=False,  # the tutorial's launch neither checks nor copies: eager_inputs shows what that does
    description="x + y, fp32; the tutorial's add_kernel (no backward, as in the tutorial)",
)
