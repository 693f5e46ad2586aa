"""x * y by an autotuned kernel launched twice in one call, on slices whose lengths give two autotune keys.

PyTorch #164124: inside one compiled function the key (`n_elements`) changes between launches, and each
launch must get the config tuned for its own key, not the first one's.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import grid_1d, two_random_vectors


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 64}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
    ],
    key=["n_elements"],
)
@triton.jit
def mul_autotuned_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    split = x.numel() // 3  # two different lengths, so two different keys
    parts = []
    for x_part, y_part in ((x[:split], y[:split]), (x[split:], y[split:])):
        out = torch.empty_like(x_part)
        n_elements = out.numel()
        wrap(mul_autotuned_kernel)[grid_1d(n_elements)](x_part, y_part, out, n_elements)
        parts.append(out)
    return torch.cat(parts)


SPEC = KernelSpec(
    name="autotune_key_change",
    kernels=(mul_autotuned_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.mul,
    make_inputs=two_random_vectors,
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("autotune-key-change", "autotune", "storage-offset", "grid-lambda"),
    description="x * y, fp32; @triton.autotune(key=['n_elements']) launched on x[:n//3] and x[n//3:], two keys in one call",
)
