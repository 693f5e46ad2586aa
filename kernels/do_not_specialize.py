"""x + 1 with `@triton.jit(do_not_specialize=["n_elements"])`: one compiled kernel for every length."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, one_random_vector


@triton.jit(do_not_specialize=["n_elements"])
def add_one_unspecialized_kernel(in_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + 1.0, mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(add_one_unspecialized_kernel)[grid_1d(n_elements)](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x + 1.0



SPEC = KernelSpec(
    name="do_not_specialize",
    kernels=(add_one_unspecialized_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    sizes=(1024, 1537),  # 1024 is divisible by 16, which Triton would otherwise specialize on
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("do-not-specialize", "grid-lambda"),
    description="x + 1, fp32; n_elements in do_not_specialize, so its divisibility is not baked into the kernel",
)
