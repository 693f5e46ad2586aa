"""tanh(x) through `triton.language.extra.libdevice`: GPU only (the interpreter has no libdevice)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:  # triton before 3.0 kept it under the CUDA backend (PyTorch's own test falls back the same way)
    from triton.language.extra.cuda import libdevice

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, one_random_vector


@triton.jit
def libdevice_tanh_kernel(in_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, libdevice.tanh(x), mask=mask)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(libdevice_tanh_kernel)[grid_1d(n_elements)](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out



SPEC = KernelSpec(
    name="libdevice_tanh",
    kernels=(libdevice_tanh_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=torch.tanh,
    make_inputs=one_random_vector,
    flops=lambda x_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    requires=("libdevice",),
    features=("libdevice", "grid-lambda"),
    description="tanh(x), fp32, via libdevice.tanh (PyTorch's test_triton_kernel_with_imported_symbol uses fast_dividef)",
)
