"""The tutorial's vector add under `@triton.autotune` (configs and key only: what torch.compile supports)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import grid_1d, two_random_vectors


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 512}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def add_autotuned_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()  # the kernel indexes flat memory: copy strided views
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(add_autotuned_kernel)[grid_1d(n_elements)](x, y, out, n_elements)
    return out


SPEC = KernelSpec(
    name="add_autotuned",
    kernels=(add_autotuned_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.add,
    make_inputs=two_random_vectors,
    flops=lambda x_shape, y_shape: x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("autotune", "grid-lambda"),
    description="x + y, fp32; @triton.autotune over BLOCK_SIZE with key=['n_elements'] (the tutorial's advanced usage)",
)
