"""One kernel, two outputs: (x + y, x - y); the backward is one Triton kernel with two outputs too."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, two_random_vectors


@triton.jit
def sum_and_difference_kernel(in_ptr0, in_ptr1, sum_ptr, diff_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(in_ptr0 + offsets, mask=mask)
    b = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(sum_ptr + offsets, a + b, mask=mask)
    tl.store(diff_ptr + offsets, a - b, mask=mask)


def _sum_and_difference(wrap, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    total = torch.empty_like(a)
    difference = torch.empty_like(a)
    n_elements = a.numel()
    wrap(sum_and_difference_kernel)[grid_1d(n_elements)](a, b, total, difference, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return total, difference


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _sum_and_difference(wrap, x.contiguous(), y.contiguous())  # flat indexing: copy strided views


def backward(wrap, grad_sum: torch.Tensor, grad_difference: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # d/dx = grad_sum + grad_difference, d/dy = grad_sum - grad_difference: the forward kernel again
    return _sum_and_difference(wrap, grad_sum.contiguous(), grad_difference.contiguous())


def reference(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x + y, x - y


SPEC = KernelSpec(
    name="two_outputs",
    kernels=(sum_and_difference_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=reference,
    make_inputs=two_random_vectors,
    num_outputs=2,
    backward=backward,
    save_for_backward=lambda args, output: (),
    backward_kernels=(sum_and_difference_kernel,),
    flops=lambda x_shape, y_shape: 2 * x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("multiple-outputs", "grid-lambda", "constexpr-kwarg"),
    description="(x + y, x - y) from one kernel, fp32; backward is the same kernel on the two gradients",
)
