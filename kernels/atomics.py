"""A scatter-add: each element is `tl.atomic_add`-ed into bin (index mod BINS) of a zeroed output.

The inputs are small integers held in float32, so every sum is exact in any order: the atomics' order
(which differs run to run on a GPU) cannot make a right kernel look `wrong`, and a lost or doubled add
still shows.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d

BINS = 16


@triton.jit
def scatter_add_atomic_kernel(in_ptr, out_ptr, n_elements, BINS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)
    tl.atomic_add(out_ptr + offsets % BINS, x, mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.zeros(BINS, dtype=x.dtype, device=x.device)
    n_elements = x.numel()
    wrap(scatter_add_atomic_kernel)[grid_1d(n_elements)](x, out, n_elements, BINS=BINS, BLOCK_SIZE=BLOCK_SIZE)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    flat = x.reshape(-1)
    bins = torch.arange(flat.numel(), device=x.device) % BINS
    return torch.zeros(BINS, dtype=x.dtype, device=x.device).index_add_(0, bins, flat)


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return (torch.randint(-8, 9, (size,), generator=generator).to(device=device, dtype=torch.float32),)


SPEC = KernelSpec(
    name="atomics",
    kernels=(scatter_add_atomic_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("atomics", "grid-lambda"),
    description=f"scatter-add of x into {BINS} bins with tl.atomic_add, fp32 holding small integers (exact in any order)",
)
