"""max(x, y) launched with `num_warps` and `num_stages` passed at the launch, not in an autotune Config."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, two_random_vectors


@triton.jit
def maximum_options_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x, y), mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(maximum_options_kernel)[grid_1d(n_elements)](x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE,
                                                      num_warps=8, num_stages=3)
    return out


SPEC = KernelSpec(
    name="launch_options",
    kernels=(maximum_options_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.maximum,
    make_inputs=two_random_vectors,
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("launch-options", "grid-lambda"),
    description="max(x, y), fp32; num_warps=8, num_stages=3 at the launch (PyTorch's special_kwargs_without_autotune)",
)
