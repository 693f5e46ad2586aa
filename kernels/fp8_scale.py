"""float8 (e4m3) in, float32 out: x upcast and scaled by a float32 per-tensor scale, as fp8 dequantisation does."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, random_vector


@triton.jit
def dequantize_fp8_kernel(in_ptr, scale_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask).to(tl.float32)
    scale = tl.load(scale_ptr)
    tl.store(out_ptr + offsets, x * scale, mask=mask)


def launch(wrap, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    n_elements = out.numel()
    wrap(dequantize_fp8_kernel)[grid_1d(n_elements)](x, scale, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float32) * scale.to(torch.float32)


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    x = random_vector(size, device, generator).to(torch.float8_e4m3fn)
    scale = torch.tensor([0.25], dtype=torch.float32, device=device)  # a power of two: the product is exact
    return x, scale


SPEC = KernelSpec(
    name="fp8_scale",
    kernels=(dequantize_fp8_kernel,),
    arguments=(("x", torch.Tensor), ("scale", torch.Tensor)),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda x_shape, scale_shape: x_shape.numel(),
    dtypes=(torch.float8_e4m3fn,),
    accepts_noncontiguous=True,
    requires=("fp8",),
    differentiable=(),
    features=("fp8", "grid-lambda"),
    description="float8_e4m3fn x times a float32 scale (0.25) into float32; needs sm89+ on a GPU",
)
