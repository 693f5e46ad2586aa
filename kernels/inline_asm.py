"""x + x with `tl.inline_asm_elementwise` (PTX `add.f32`): CUDA GPUs only (the interpreter has no inline assembly)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, random_vector


@triton.jit
def double_inline_asm_kernel(in_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)
    doubled = tl.inline_asm_elementwise("add.f32 $0, $1, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + offsets, doubled, mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(double_inline_asm_kernel)[grid_1d(n_elements)](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x + x


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return (random_vector(size, device, generator),)


SPEC = KernelSpec(
    name="inline_asm",
    kernels=(double_inline_asm_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    requires=("inline-asm",),
    features=("inline-asm", "grid-lambda"),
    description="x + x, fp32, as PTX add.f32 in tl.inline_asm_elementwise (PyTorch's test_kernel_inline_asm)",
)
