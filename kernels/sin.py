"""The tutorial's `mysin`, with its backward through a Triton cos kernel."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, one_random_vector


@triton.jit
def sin_kernel(in_ptr0, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.sin(x), mask=mask)


@triton.jit
def sin_backward_kernel(in_ptr0, grad_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    grad = tl.load(grad_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, grad * tl.cos(x), mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = x.numel()
    wrap(sin_kernel)[grid_1d(n_elements)](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def backward(wrap, x: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor]:
    grad = grad.contiguous()  # autograd may hand an expanded (stride 0) gradient
    grad_x = torch.empty_like(x)
    n_elements = x.numel()
    wrap(sin_backward_kernel)[grid_1d(n_elements)](x, grad, grad_x, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return (grad_x,)



SPEC = KernelSpec(
    name="sin",
    kernels=(sin_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=torch.sin,
    make_inputs=one_random_vector,
    backward=backward,
    save_for_backward=lambda args, output: (args[0],),
    backward_kernels=(sin_backward_kernel,),
    flops=lambda x_shape: x_shape.numel(),
    features=("grid-lambda", "constexpr-kwarg"),
    accepts_noncontiguous=False,  # the tutorial's launch neither checks nor copies: eager_inputs shows what that does
    description="sin(x), fp32; the tutorial's mysin, backward grad * cos(x) in Triton",
)
