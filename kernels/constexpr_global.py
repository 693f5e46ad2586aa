"""x * SCALE + OFFSET where both are module-level `tl.constexpr` globals read inside the kernel (Liger-Kernel#174)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, one_random_vector

SCALE: tl.constexpr = tl.constexpr(3.0)
OFFSET = tl.constexpr(0.5)  # un-annotated on purpose: PyTorch's test_triton_kernel_global_constexpr does the same


@triton.jit
def scale_global_kernel(in_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * SCALE + OFFSET, mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(scale_global_kernel)[grid_1d(n_elements)](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x * 3.0 + 0.5



SPEC = KernelSpec(
    name="constexpr_global",
    kernels=(scale_global_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    flops=lambda x_shape: 2 * x_shape.numel(),
    accepts_noncontiguous=True,
    features=("constexpr-global", "grid-lambda"),
    description="x * 3 + 0.5, fp32; 3 and 0.5 are module-level tl.constexpr globals (one annotated, one not)",
)
