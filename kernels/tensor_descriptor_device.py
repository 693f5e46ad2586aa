"""x + y on 2-D tiles through TMA descriptors made on the device: `tl.make_tensor_descriptor` inside the kernel.

`kernels/tensor_descriptor.py` builds its descriptors on the host (`TensorDescriptor`) and passes them in; here the
kernel takes plain pointers, shapes and strides and builds each descriptor itself, as PyTorch's
`test_on_device_tma` does. On a GPU the descriptors live in global scratch memory that Triton asks for through a
process-wide allocator (`triton.set_allocator`); the spec declares it (`requires`: `triton-allocator`) and the
harness sets a torch-backed one for the cell and puts the previous one back after it (harness/domain/machine.py),
so no cell leaves it behind. Compute capability 9.0 (Hopper) or newer; the CPU tier's interpreter emulates the
descriptors.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import random_vector
from kernels.tensor_descriptor import BLOCK_M, BLOCK_N, COLUMNS


@triton.jit
def add_device_tma_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    out_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    row = tl.program_id(axis=0) * BLOCK_M
    column = tl.program_id(axis=1) * BLOCK_N
    out_desc.store([row, column], x_desc.load([row, column]) + y_desc.load([row, column]))


def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()  # the descriptors say strides (N, 1): a dense copy has them
    out = torch.empty_like(x)
    rows, columns = x.shape
    grid = (triton.cdiv(rows, BLOCK_M), triton.cdiv(columns, BLOCK_N))
    wrap(add_device_tma_kernel)[grid](x, y, out, rows, columns, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return tuple(random_vector(size * COLUMNS, device, generator).view(size, COLUMNS) for _ in range(2))


SPEC = KernelSpec(
    name="tensor_descriptor_device",
    kernels=(add_device_tma_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=launch,
    reference=torch.add,
    make_inputs=make_inputs,
    sizes=(40, 67),
    flops=lambda x_shape, y_shape: x_shape.numel(),
    accepts_noncontiguous=True,
    requires=("sm90", "triton-allocator"),
    features=("tensor-descriptor-device", "grid-tuple"),
    description=f"x + y on (size, {COLUMNS}) fp32 tiles of {BLOCK_M}x{BLOCK_N}; descriptors made in the kernel "
    "with tl.make_tensor_descriptor (PyTorch's test_on_device_tma), scratch from triton.set_allocator",
)
