"""x + y where both inputs are contiguous views into bigger tensors, starting at a non-zero storage offset."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, random_vector

X_OFFSET, Y_OFFSET = 3, 17


@triton.jit
def add_offset_views_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()  # a contiguous view keeps its storage offset: the kernel sees it
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(add_offset_views_kernel)[grid_1d(n_elements)](x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    """Slices of bigger tensors: data_ptr() != the storage's, which a pipeline that copies or re-bases must keep."""
    x_base = random_vector(size + 2 * X_OFFSET, device, generator)
    y_base = random_vector(size + 2 * Y_OFFSET, device, generator)
    return x_base[X_OFFSET:X_OFFSET + size], y_base[Y_OFFSET:Y_OFFSET + size]


SPEC = KernelSpec(
    name="storage_offset",
    kernels=(add_offset_views_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.add,
    make_inputs=make_inputs,
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("storage-offset", "grid-lambda"),
    description=f"x + y, fp32; x and y are views at storage offsets {X_OFFSET} and {Y_OFFSET} of bigger tensors "
    "(PyTorch's test_triton_kernel_strided_input_nonzero_offset)",
)
