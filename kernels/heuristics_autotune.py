"""Vector add with `@triton.heuristics` written above `@triton.autotune` (heuristics wraps the autotuner).

Decorator order, top to bottom: heuristics, autotune, jit. The heuristic therefore runs before a
config is chosen and cannot read BLOCK_SIZE, so it asks whether n_elements is a multiple of
1024, which every config's BLOCK_SIZE divides. `autotune_heuristics` is the other order.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import grid_1d, two_random_vectors

LARGEST_BLOCK = 1024  # every config's BLOCK_SIZE divides it


@triton.heuristics({"EVEN": lambda args: args["n_elements"] % LARGEST_BLOCK == 0})
@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def heuristics_autotune_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(in_ptr0 + offsets) + tl.load(in_ptr1 + offsets))
    else:
        mask = offsets < n_elements
        x = tl.load(in_ptr0 + offsets, mask=mask)
        y = tl.load(in_ptr1 + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()  # the kernel indexes flat memory: copy strided views
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(heuristics_autotune_kernel)[grid_1d(n_elements)](x, y, out, n_elements)
    return out


SPEC = KernelSpec(
    name="heuristics_autotune",
    kernels=(heuristics_autotune_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.add,
    make_inputs=two_random_vectors,
    sizes=(1000, 3072),  # 3072 % 1024 == 0: the second size takes the EVEN branch
    flops=lambda x_shape, y_shape: x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("autotune", "heuristics", "grid-lambda"),
    description="x + y, fp32; @triton.heuristics above @triton.autotune (heuristics applied after autotune wraps the kernel)",
)
