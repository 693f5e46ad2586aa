"""Elementwise multiply under `@triton.autotune(prune_configs_by=...)`: an argument torch.compile does not list as supported."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import grid_1d, two_random_vectors


def prune_large_blocks(configs, named_args, **kwargs):
    """Drop configs whose block is larger than the whole input; keep the smallest if none is left."""
    n_elements = named_args["n_elements"]
    kept = [config for config in configs if config.kwargs["BLOCK_SIZE"] <= n_elements]
    return kept or [min(configs, key=lambda config: config.kwargs["BLOCK_SIZE"])]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
    ],
    key=["n_elements"],
    prune_configs_by={"early_config_prune": prune_large_blocks},
)
@triton.jit
def autotune_prune_configs_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()  # the kernel indexes flat memory: copy strided views
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(autotune_prune_configs_kernel)[grid_1d(n_elements)](x, y, out, n_elements)
    return out


SPEC = KernelSpec(
    name="autotune_prune_configs",
    kernels=(autotune_prune_configs_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.mul,
    make_inputs=two_random_vectors,
    sizes=(1000, 1537),  # 1000 keeps two configs, 1537 keeps three
    flops=lambda x_shape, y_shape: x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("autotune", "grid-lambda"),
    description="x * y, fp32; @triton.autotune with prune_configs_by={'early_config_prune': ...}",
)
