"""Row-wise x + 1 on a 2-D tensor through `tl.make_block_ptr`, walking the columns with `tl.advance`."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import random_vector

COLUMNS = 96
BLOCK_M, BLOCK_N = 16, 32


@triton.jit
def add_one_block_ptr_kernel(in_ptr, out_ptr, M, N, stride_m, stride_n,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0) * BLOCK_M
    source = tl.make_block_ptr(base=in_ptr, shape=(M, N), strides=(stride_m, stride_n), offsets=(row, 0),
                               block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    target = tl.make_block_ptr(base=out_ptr, shape=(M, N), strides=(N, 1), offsets=(row, 0),
                               block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    for _ in range(0, tl.cdiv(N, BLOCK_N)):
        block = tl.load(source, boundary_check=(0, 1))
        tl.store(target, block + 1.0, boundary_check=(0, 1))
        source = tl.advance(source, (0, BLOCK_N))
        target = tl.advance(target, (0, BLOCK_N))


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)  # contiguous whatever x's strides
    m, n = x.shape
    grid = (triton.cdiv(m, BLOCK_M),)
    wrap(add_one_block_ptr_kernel)[grid](x, out, m, n, x.stride(0), x.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x + 1.0


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return (random_vector(size * COLUMNS, device, generator).view(size, COLUMNS),)


SPEC = KernelSpec(
    name="block_pointer",
    kernels=(add_one_block_ptr_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    sizes=(40, 67),
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,  # the block pointer takes x's strides
    features=("block-pointer", "grid-tuple"),
    description=f"x + 1 on a (size, {COLUMNS}) fp32 tensor; tl.make_block_ptr with boundary checks, tl.advance "
    "along the columns (PyTorch's mutation tests test_for_loop_arg_2, test_while_loop)",
)
