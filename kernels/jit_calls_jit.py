"""x * y + x with the arithmetic in a `@triton.jit` helper that the kernel calls."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, two_random_vectors


@triton.jit
def _fma_helper(x, y):
    return x * y + x


@triton.jit
def fma_calls_helper_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, _fma_helper(x, y), mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(fma_calls_helper_kernel)[grid_1d(n_elements)](x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * y + x


SPEC = KernelSpec(
    name="jit_calls_jit",
    kernels=(fma_calls_helper_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=reference,
    make_inputs=two_random_vectors,
    flops=lambda x_shape, y_shape: 2 * x_shape.numel(),
    accepts_noncontiguous=True,
    features=("jit-calls-jit", "grid-lambda"),
    description="x * y + x, fp32; the math lives in a @triton.jit helper the kernel calls",
)
