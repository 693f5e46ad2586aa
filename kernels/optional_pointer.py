"""2x (+ bias where one is given): the bias pointer is passed as `None`, and the kernel branches on it."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, one_random_vector


@triton.jit
def double_optional_bias_kernel(in_ptr, bias_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask) * 2.0
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x, mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(double_optional_bias_kernel)[grid_1d(n_elements)](x, None, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0



SPEC = KernelSpec(
    name="optional_pointer",
    kernels=(double_optional_bias_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("optional-pointer", "grid-lambda"),
    description="2x, fp32; the bias pointer is None at the launch (PyTorch #115344, test_triton_kernel_none_args)",
)
