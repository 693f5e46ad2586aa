"""Kernels that round like real kernels, and kernels with real bugs: both sides of the tolerance model.

- `scale_rows`: y = x * w over rows; its weight gradient is summed by each program over its rows in fp32,
  then torch sums the programs' partial sums (as Liger-Kernel's fused norms do). Rounding only: must pass.
- `scale_rows_missing_row`: the same, but the weight gradient leaves out the last of 389 rows: must be `wrong`.
- `scale_add_fp16` / `scale_add_bf16`: x * 3.1 + y computed in fp32 and rounded once, where PyTorch rounds
  after each step: outputs differ from PyTorch's in the last bit at some elements, and must pass.
- `add_off_by_one`: x + y with a mask that leaves out the last element: must be `wrong`.
"""

from __future__ import annotations

import dataclasses

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

COLUMNS = 128
ROWS_PER_PROGRAM = 64


@triton.jit
def scale_rows_kernel(x_ptr, w_ptr, out_ptr, rows, COLUMNS: tl.constexpr, ROWS: tl.constexpr):
    row = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    column = tl.arange(0, COLUMNS)[None, :]
    mask = row < rows
    x = tl.load(x_ptr + row * COLUMNS + column, mask=mask)
    w = tl.load(w_ptr + column)
    tl.store(out_ptr + row * COLUMNS + column, x * w, mask=mask)


@triton.jit
def scale_rows_backward_kernel(x_ptr, w_ptr, grad_ptr, grad_x_ptr, partial_ptr, rows, used_rows,
                               COLUMNS: tl.constexpr, ROWS: tl.constexpr):
    """grad_x = grad * w; each program writes its rows' sum of grad * x (fp32) to its row of `partial`."""
    program = tl.program_id(0)
    row = program * ROWS + tl.arange(0, ROWS)[:, None]
    column = tl.arange(0, COLUMNS)[None, :]
    mask = row < rows
    x = tl.load(x_ptr + row * COLUMNS + column, mask=mask, other=0.0)
    grad = tl.load(grad_ptr + row * COLUMNS + column, mask=mask, other=0.0)
    w = tl.load(w_ptr + column)
    tl.store(grad_x_ptr + row * COLUMNS + column, grad * w, mask=mask)
    used = tl.where(row < used_rows, grad * x, 0.0)
    tl.store(partial_ptr + program * COLUMNS + tl.arange(0, COLUMNS), tl.sum(used, axis=0))


def _launch_scale_rows(wrap, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    rows = x.shape[0]
    wrap(scale_rows_kernel)[(triton.cdiv(rows, ROWS_PER_PROGRAM),)](x, w, out, rows, COLUMNS=COLUMNS,
                                                                    ROWS=ROWS_PER_PROGRAM)
    return out


def _backward(rows_left_out: int):
    def backward(wrap, x: torch.Tensor, w: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = x.shape[0]
        programs = triton.cdiv(rows, ROWS_PER_PROGRAM)
        grad_x = torch.empty_like(x)
        partial = torch.empty((programs, COLUMNS), device=x.device, dtype=torch.float32)
        wrap(scale_rows_backward_kernel)[(programs,)](x, w, grad.contiguous(), grad_x, partial, rows,
                                                      rows - rows_left_out, COLUMNS=COLUMNS, ROWS=ROWS_PER_PROGRAM)
        return grad_x, partial.sum(0)
    return backward


def _rows_and_weight(size: int, device: torch.device, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(size, COLUMNS, generator=generator)
    w = torch.randn(COLUMNS, generator=generator)
    return x.to(device), w.to(device)


SCALE_ROWS = KernelSpec(
    name="scale_rows",
    kernels=(scale_rows_kernel,),
    arguments=(("x", torch.Tensor), ("w", torch.Tensor)),
    launch=_launch_scale_rows,
    reference=lambda x, w: x * w,
    make_inputs=_rows_and_weight,
    sizes=(4096, 4095),
    backward=_backward(rows_left_out=0),
    save_for_backward=lambda args, output: (args[0], args[1]),
    backward_kernels=(scale_rows_backward_kernel,),
    description="x * w; the weight gradient summed per program in fp32, then over programs by torch",
)

SCALE_ROWS_MISSING_ROW = dataclasses.replace(
    SCALE_ROWS, name="scale_rows_missing_row", sizes=(389, 390), backward=_backward(rows_left_out=1),
    description="scale_rows whose weight gradient leaves out the last row (a real bug)",
)


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x * 3.1 + y).to(out_ptr.dtype.element_ty), mask=mask)


def _launch_scale_add(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    wrap(scale_add_kernel)[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out


def _scale_add(dtype: torch.dtype) -> KernelSpec:
    def make_inputs(size: int, device: torch.device, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return tuple(torch.randn(size, generator=generator).to(device=device, dtype=dtype) for _ in range(2))

    return KernelSpec(
        name=f"scale_add_{ {torch.float16: 'fp16', torch.bfloat16: 'bf16'}[dtype]}",
        kernels=(scale_add_kernel,),
        arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
        launch=_launch_scale_add,
        reference=lambda x, y: x * 3.1 + y,
        make_inputs=make_inputs,
        dtypes=(dtype,),
        description=f"x * 3.1 + y in {dtype}: one rounding in the kernel, two in PyTorch",
    )


@triton.jit
def add_short_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n - 1  # the bug: the last element is never written
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def _launch_add_short(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    wrap(add_short_kernel)[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out


ADD_OFF_BY_ONE = KernelSpec(
    name="add_off_by_one",
    kernels=(add_short_kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
    launch=_launch_add_short,
    reference=torch.add,
    make_inputs=lambda size, device, generator: tuple(torch.randn(size, generator=generator).to(device) for _ in range(2)),
    description="x + y whose mask leaves out the last element (a real bug)",
)

SPECS = [SCALE_ROWS, SCALE_ROWS_MISSING_ROW, _scale_add(torch.float16), _scale_add(torch.bfloat16), ADD_OFF_BY_ONE]
