"""x - y launched with `kernel.run(..., grid=..., warmup=False)` instead of `kernel[grid](...)`."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, two_random_vectors


@triton.jit
def sub_run_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x - y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    wrap(sub_run_kernel).run(x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE, grid=grid, warmup=False)
    return out


SPEC = KernelSpec(
    name="kernel_run",
    kernels=(sub_run_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.sub,
    make_inputs=two_random_vectors,
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("kernel-run", "grid-tuple"),
    description="x - y, fp32; launched as kernel.run(..., grid=(n,), warmup=False) (PyTorch's test_triton_kernel_no_clones)",
)
