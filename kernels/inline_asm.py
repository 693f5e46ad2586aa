"""-x by flipping the sign bit in `tl.inline_asm_elementwise` (PTX `xor.b32`): CUDA GPUs only.

The interpreter of the CPU tier has no inline assembly: there the kernel is `skip`.

The assembly works on the float's bits as a uint32 in an `r` register, as PyTorch's own inline-asm kernels do, so no
float register constraint is involved.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, one_random_vector


@triton.jit
def negate_inline_asm_kernel(in_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    bits = tl.load(in_ptr + offsets, mask=mask).to(tl.uint32, bitcast=True)
    flipped = tl.inline_asm_elementwise("xor.b32 $0, $1, 0x80000000;", "=r,r", [bits], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offsets, flipped.to(tl.float32, bitcast=True), mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(negate_inline_asm_kernel)[grid_1d(n_elements)](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return -x



SPEC = KernelSpec(
    name="inline_asm",
    kernels=(negate_inline_asm_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    requires=("inline-asm",),
    features=("inline-asm", "grid-lambda"),
    description="-x, fp32, as PTX xor.b32 of the sign bit in tl.inline_asm_elementwise (PyTorch's test_kernel_inline_asm)",
)
