"""2x computed in float32 and stored as float16, the output dtype passed to the kernel as a `tl.dtype` constexpr."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, one_random_vector


@triton.jit
def double_cast_kernel(in_ptr, out_ptr, n_elements, OUT_DTYPE: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x * 2.0).to(OUT_DTYPE), mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty(x.shape, dtype=torch.float16, device=x.device)
    n_elements = out.numel()
    wrap(double_cast_kernel)[grid_1d(n_elements)](x, out, n_elements, OUT_DTYPE=tl.float16, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return (x.float() * 2.0).to(torch.float16)



SPEC = KernelSpec(
    name="dtype_constexpr",
    kernels=(double_cast_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("dtype-constexpr", "grid-lambda"),
    description="2x in fp32, stored as fp16; OUT_DTYPE=tl.float16 is a constexpr argument "
    "(PyTorch's test_triton_kernel_triton_dtype)",
)
