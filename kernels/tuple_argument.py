"""x * y where the two input pointers reach the kernel as one tuple argument (PyTorch #148289)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, two_random_vectors


@triton.jit
def mul_tuple_arg_kernel(in_ptrs, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptrs[0] + offsets, mask=mask)
    y = tl.load(in_ptrs[1] + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(mul_tuple_arg_kernel)[grid_1d(n_elements)]((x, y), out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


SPEC = KernelSpec(
    name="tuple_argument",
    kernels=(mul_tuple_arg_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.mul,
    make_inputs=two_random_vectors,
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("tuple-argument", "grid-lambda"),
    description="x * y, fp32; the kernel takes (x, y) as one tuple argument and indexes it",
)
