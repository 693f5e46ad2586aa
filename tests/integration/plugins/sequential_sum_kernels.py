"""A weight gradient reduced as Liger-Kernel's fused norms reduce it: each program adds its rows one after
another in fp32 (a loop over rows, not a tree), then torch sums the programs' partial sums. Rounding only.

PyTorch's own sum is cascaded and far more accurate than a row-by-row loop, so this kernel errs several times
more than PyTorch does: tests/integration/test_tolerance_reductions.py shows it, and that it still passes.
"""

from __future__ import annotations

import dataclasses

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

COLUMNS = 64
ROWS_PER_PROGRAM = 256


@triton.jit
def row_scale_kernel(x_ptr, w_ptr, y_ptr, COLUMNS: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, COLUMNS)
    tl.store(y_ptr + row * COLUMNS + cols, tl.load(x_ptr + row * COLUMNS + cols) * tl.load(w_ptr + cols))


@triton.jit
def row_scale_backward_kernel(x_ptr, w_ptr, grad_ptr, grad_x_ptr, partial_ptr, rows, summed_rows,
                              COLUMNS: tl.constexpr, ROWS: tl.constexpr):
    """grad_x = grad * w; this program's partial weight gradient adds grad * x over its ROWS rows, one after another."""
    program = tl.program_id(axis=0)
    cols = tl.arange(0, COLUMNS)
    w = tl.load(w_ptr + cols)
    partial = tl.zeros((COLUMNS,), dtype=tl.float32)
    for step in range(0, ROWS):
        row = program * ROWS + step
        mask = (cols < COLUMNS) & (row < rows)
        x = tl.load(x_ptr + row * COLUMNS + cols, mask=mask, other=0.0)
        grad = tl.load(grad_ptr + row * COLUMNS + cols, mask=mask, other=0.0)
        tl.store(grad_x_ptr + row * COLUMNS + cols, grad * w, mask=mask)
        partial += tl.where(mask & (row < summed_rows), grad * x, 0.0)
    tl.store(partial_ptr + program * COLUMNS + cols, partial)


def _launch(wrap, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    wrap(row_scale_kernel)[(x.shape[0],)](x, w, y, COLUMNS=COLUMNS)
    return y


def _backward(rows_left_out: int):
    def backward(wrap, x: torch.Tensor, w: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = x.shape[0]
        programs = triton.cdiv(rows, ROWS_PER_PROGRAM)
        grad_x = torch.empty_like(x)
        partial = torch.empty((programs, COLUMNS), dtype=torch.float32, device=x.device)
        wrap(row_scale_backward_kernel)[(programs,)](x, w, grad.contiguous(), grad_x, partial, rows,
                                                     rows - rows_left_out, COLUMNS=COLUMNS, ROWS=ROWS_PER_PROGRAM)
        return grad_x, partial.sum(dim=0)  # torch sums the programs' partial sums, as Liger-Kernel does
    return backward


def _inputs(size: int, device: torch.device, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = 4 * torch.randn((size, COLUMNS), generator=generator)
    return x.to(device), torch.randn((COLUMNS,), generator=generator).to(device)


SEQUENTIAL_ROW_SCALE = KernelSpec(
    name="sequential_row_scale", kernels=(row_scale_kernel,), arguments=(("x", torch.Tensor), ("w", torch.Tensor)),
    launch=_launch, reference=lambda x, w: x * w, make_inputs=_inputs, sizes=(2048, 1024),
    backward=_backward(rows_left_out=0), save_for_backward=lambda args, output: args,
    backward_kernels=(row_scale_backward_kernel,),
    description="x * w; the weight gradient added row by row per program in fp32 (256 rows each), then by torch",
)
SEQUENTIAL_ROW_SCALE_MISSING_ROW = dataclasses.replace(
    SEQUENTIAL_ROW_SCALE, name="sequential_row_scale_missing_row", sizes=(389, 390), backward=_backward(rows_left_out=1),
    description="sequential_row_scale whose weight gradient leaves out the last of 389 rows (a real bug)",
)
