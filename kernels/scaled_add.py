"""x + alpha * y: a float scalar argument, a tl.constexpr passed by keyword, and the grid as a lambda over meta."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import random_vector

ALPHA = 0.75
SCALED_ADD_BLOCK = 128


@triton.jit
def scaled_add_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + alpha * y, mask=mask)


def launch(wrap, x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()  # the kernel indexes flat memory: copy strided views
    out = torch.empty_like(x)
    n_elements = out.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    wrap(scaled_add_kernel)[grid](x, y, out, n_elements, alpha, BLOCK_SIZE=SCALED_ADD_BLOCK)
    return out


def reference(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return random_vector(size, device, generator), random_vector(size, device, generator), ALPHA


SPEC = KernelSpec(
    name="scaled_add",
    kernels=(scaled_add_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor), ("alpha", float)),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda x_shape, y_shape, alpha: 2 * x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("scalar-arg", "constexpr-kwarg", "grid-lambda"),
    description=f"x + alpha * y, fp32, alpha a float argument ({ALPHA} in the inputs); no backward "
    "(a spec's backward sees only saved tensors, so alpha cannot reach it as a float)",
)
