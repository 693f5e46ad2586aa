"""SiLU with bf16 in and out and fp32 math, as in the PyTorch blog on tracing user Triton kernels."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, random_vector


@triton.jit
def silu_kernel(in_ptr0, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask).to(tl.float32)
    y = x * tl.sigmoid(x)
    tl.store(out_ptr + offsets, y.to(tl.bfloat16), mask=mask)


@triton.jit
def silu_backward_kernel(in_ptr0, grad_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask).to(tl.float32)
    grad = tl.load(grad_ptr + offsets, mask=mask).to(tl.float32)
    s = tl.sigmoid(x)
    grad_x = grad * (s + x * s * (1.0 - s))
    tl.store(out_ptr + offsets, grad_x.to(tl.bfloat16), mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = x.numel()
    wrap(silu_kernel)[grid_1d(n_elements)](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def backward(wrap, x: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor]:
    grad = grad.contiguous()  # autograd may hand an expanded (stride 0) gradient
    grad_x = torch.empty_like(x)
    n_elements = x.numel()
    wrap(silu_backward_kernel)[grid_1d(n_elements)](x, grad, grad_x, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return (grad_x,)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(x.float()).to(torch.bfloat16)


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return (random_vector(size, device, generator, dtype=torch.bfloat16),)


SPEC = KernelSpec(
    name="silu",
    kernels=(silu_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    backward=backward,
    save_for_backward=lambda args, output: (args[0],),
    backward_kernels=(silu_backward_kernel,),
    flops=lambda x_shape: 4 * x_shape.numel(),
    features=("grid-lambda", "constexpr-kwarg"),
    dtypes=(torch.bfloat16,),
    accepts_noncontiguous=False,  # as in the blog: eager_inputs shows what a strided view does to it
    description="x * sigmoid(x), bf16 in and out, fp32 math; backward in Triton",
)
