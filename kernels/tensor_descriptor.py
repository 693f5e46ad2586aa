"""x + y on 2-D tiles through TMA: host-side `TensorDescriptor`s that the kernel loads and stores through.

On a GPU this needs compute capability 9.0 (Hopper) or newer; below it the cell is `skip`. The CPU
tier's interpreter emulates descriptors, so it runs there.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import random_vector

COLUMNS = 64
BLOCK_M, BLOCK_N = 16, 64


@triton.jit
def add_tma_kernel(x_desc, y_desc, out_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0) * BLOCK_M
    column = tl.program_id(axis=1) * BLOCK_N
    x = x_desc.load([row, column])
    y = y_desc.load([row, column])
    out_desc.store([row, column], x + y)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    from triton.tools.tensor_descriptor import TensorDescriptor

    x, y = x.contiguous(), y.contiguous()  # TMA needs 16-byte aligned strides: a dense copy has them
    out = torch.empty_like(x)
    block = [BLOCK_M, BLOCK_N]
    descriptors = [TensorDescriptor.from_tensor(t, block) for t in (x, y, out)]
    grid = (triton.cdiv(x.shape[0], BLOCK_M), triton.cdiv(x.shape[1], BLOCK_N))
    wrap(add_tma_kernel)[grid](*descriptors, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return tuple(random_vector(size * COLUMNS, device, generator).view(size, COLUMNS) for _ in range(2))


SPEC = KernelSpec(
    name="tensor_descriptor",
    kernels=(add_tma_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.add,
    make_inputs=make_inputs,
    sizes=(40, 67),
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    requires=("sm90",),
    features=("tensor-descriptor", "grid-tuple"),
    description=f"x + y on (size, {COLUMNS}) fp32 tiles of {BLOCK_M}x{BLOCK_N}; host-side "
    "triton.tools.tensor_descriptor.TensorDescriptor (PyTorch's test_tma_descriptor_2d, 'new' API)",
)
