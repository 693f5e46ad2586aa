"""A plug-in whose launch mutates its input with torch ops before its kernel (CPU tier, locations test).

Dynamo traces this launch without meeting Triton's interpreter, so the FX graph it makes carries the stack
that Inductor quotes when it skips CUDA graphs for a mutated input (tests/integration/test_user_code_locations.py).
"""

import torch
import triton
import triton.language as tl

from harness import KernelSpec


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def launch(wrap, x, y):
    x.add_(y)  # the mutation Inductor's reason points at
    return x.clone()


SPEC = KernelSpec(
    name="mutating_launch",
    kernels=(copy_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=lambda x, y: x.add_(y).clone(),
    make_inputs=lambda size, device, gen: (torch.randn(size, generator=gen).to(device),
                                           torch.randn(size, generator=gen).to(device)),
    mutates_args=("x",),
)
