"""Sum of a vector through tl.atomic_add under `@triton.autotune(reset_to_zero=[...])` on the accumulator.

reset_to_zero only zeroes the accumulator while configs are benchmarked (and once after), not on
later launches, so the launch still allocates it with torch.zeros. The inputs are small integers
held in fp32, so the atomic sum is exact whatever order the programs add in.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import grid_1d


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 512}, num_warps=8),
    ],
    key=["n_elements"],
    reset_to_zero=["out_ptr"],
)
@triton.jit
def autotune_reset_to_zero_kernel(in_ptr0, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()  # flat indexing: copy strided views
    out = torch.zeros((1,), device=x.device, dtype=x.dtype)
    n_elements = x.numel()
    wrap(autotune_reset_to_zero_kernel)[grid_1d(n_elements)](x, out, n_elements)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=0, keepdim=True)


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return (torch.randint(-8, 9, (size,), generator=generator).to(torch.float32).to(device),)


SPEC = KernelSpec(
    name="autotune_reset_to_zero",
    kernels=(autotune_reset_to_zero_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("autotune", "reduction", "grid-lambda"),
    description="x.sum() as a (1,) tensor, fp32, via tl.atomic_add; @triton.autotune with reset_to_zero=['out_ptr']",
)
