"""Vector add with `@triton.autotune` written above `@triton.heuristics` (the autotuner wraps the heuristics).

Decorator order, top to bottom: autotune, heuristics, jit. The heuristic runs after a config is
chosen, so it can read the autotuned BLOCK_SIZE. `heuristics_autotune` is the other order.
"""

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
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def autotune_heuristics_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
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
    wrap(autotune_heuristics_kernel)[grid_1d(n_elements)](x, y, out, n_elements)
    return out


SPEC = KernelSpec(
    name="autotune_heuristics",
    kernels=(autotune_heuristics_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.add,
    make_inputs=two_random_vectors,
    sizes=(1000, 3072),  # 3072 is a multiple of every BLOCK_SIZE: the second size takes the EVEN branch
    flops=lambda x_shape, y_shape: x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("autotune", "heuristics", "grid-lambda"),
    description="x + y, fp32; @triton.autotune above @triton.heuristics (heuristics applied first, sees BLOCK_SIZE)",
)
