"""Row-wise softmax over a 2-D input with a non-power-of-two row length; backward in Triton."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

N_COLS = 129  # not a power of two: the row block is masked


@triton.jit
def softmax_kernel(in_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * n_cols + cols, y, mask=mask)


@triton.jit
def softmax_backward_kernel(out_ptr, grad_ptr, grad_in_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    y = tl.load(out_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    grad = tl.load(grad_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    grad_in = y * (grad - tl.sum(grad * y, axis=0))
    tl.store(grad_in_ptr + row * n_cols + cols, grad_in, mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()  # rows are indexed as row * n_cols: copy strided views
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    wrap(softmax_kernel)[(n_rows,)](x, out, n_cols, BLOCK_N=triton.next_power_of_2(n_cols))
    return out


def backward(wrap, out: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor]:
    grad = grad.contiguous()  # autograd may hand an expanded (stride 0) gradient
    grad_in = torch.empty_like(out)
    n_rows, n_cols = out.shape
    wrap(softmax_backward_kernel)[(n_rows,)](out, grad, grad_in, n_cols, BLOCK_N=triton.next_power_of_2(n_cols))
    return (grad_in,)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return (torch.randn((size, N_COLS), generator=generator).to(device),)


SPEC = KernelSpec(
    name="softmax",
    kernels=(softmax_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    sizes=(100, 157),
    backward=backward,
    save_for_backward=lambda args, output: (output,),
    backward_kernels=(softmax_backward_kernel,),
    dynamic_dims={"x": (0,)},
    flops=lambda x_shape: 5 * x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("reduction", "constexpr-kwarg"),
    description=f"softmax over the last dim of a (size, {N_COLS}) fp32 input, one program per row; backward in Triton",
)
