"""Layer norm over the last dim of a 2-D input with weight and bias; the backward is two Triton kernels.

The forward returns only y, so the backward recomputes each row's mean and rstd: its first kernel
writes grad_x and those statistics, its second reduces grad_weight and grad_bias over the rows (in fp64).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

N_COLS = 100  # not a power of two: the row block is masked
EPS = 1e-5
BLOCK_ROWS = 32  # rows per step of the weight/bias reduction
BLOCK_COLS = 32  # columns per program of the weight/bias reduction


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centered = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centered * centered, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, centered * rstd * w + b, mask=mask)


@triton.jit
def layer_norm_backward_input_kernel(
    x_ptr, w_ptr, grad_ptr, grad_x_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK_N: tl.constexpr
):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centered = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centered * centered, axis=0) / n_cols + eps)
    x_hat = centered * rstd
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    grad = tl.load(grad_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w_grad = w * grad
    c1 = tl.sum(x_hat * w_grad, axis=0) / n_cols
    c2 = tl.sum(w_grad, axis=0) / n_cols
    grad_x = (w_grad - (x_hat * c1 + c2)) * rstd
    tl.store(grad_x_ptr + row * n_cols + cols, grad_x, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def layer_norm_backward_weight_kernel(
    x_ptr, grad_ptr, mean_ptr, rstd_ptr, grad_w_ptr, grad_b_ptr, n_rows, n_cols,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    cols = tl.program_id(axis=0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    # fp64 accumulators: the sums over every row must match torch's own reduction within fp32 tolerances
    grad_w = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float64)
    grad_b = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float64)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        row_mask = rows < n_rows
        mask = row_mask[:, None] & col_mask[None, :]
        offsets = rows[:, None] * n_cols + cols[None, :]
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0)
        mean = tl.load(mean_ptr + rows, mask=row_mask, other=0.0)
        rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0.0)
        x_hat = (x - mean[:, None]) * rstd[:, None]
        grad_w += tl.where(mask, grad * x_hat, 0.0).to(tl.float64)
        grad_b += grad.to(tl.float64)
    tl.store(grad_w_ptr + cols, tl.sum(grad_w, axis=0).to(tl.float32), mask=col_mask)
    tl.store(grad_b_ptr + cols, tl.sum(grad_b, axis=0).to(tl.float32), mask=col_mask)


def launch(wrap, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    x, weight, bias = x.contiguous(), weight.contiguous(), bias.contiguous()  # flat row indexing: copy strided views
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    wrap(layer_norm_kernel)[(n_rows,)](x, weight, bias, out, n_cols, EPS, BLOCK_N=triton.next_power_of_2(n_cols))
    return out


def backward(wrap, x: torch.Tensor, weight: torch.Tensor, grad: torch.Tensor):
    grad = grad.contiguous()  # autograd may hand an expanded (stride 0) gradient
    n_rows, n_cols = x.shape
    grad_x = torch.empty_like(x)
    mean = torch.empty((n_rows,), device=x.device, dtype=torch.float32)
    rstd = torch.empty((n_rows,), device=x.device, dtype=torch.float32)
    wrap(layer_norm_backward_input_kernel)[(n_rows,)](
        x, weight, grad, grad_x, mean, rstd, n_cols, EPS, BLOCK_N=triton.next_power_of_2(n_cols)
    )
    grad_weight = torch.empty_like(weight)
    grad_bias = torch.empty_like(weight)
    wrap(layer_norm_backward_weight_kernel)[(triton.cdiv(n_cols, BLOCK_COLS),)](
        x, grad, mean, rstd, grad_weight, grad_bias, n_rows, n_cols, BLOCK_M=BLOCK_ROWS, BLOCK_N=BLOCK_COLS
    )
    return grad_x, grad_weight, grad_bias


def reference(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    x = torch.randn((size, N_COLS), generator=generator)
    weight = 1.0 + 0.1 * torch.randn((N_COLS,), generator=generator)
    bias = 0.1 * torch.randn((N_COLS,), generator=generator)
    return x.to(device), weight.to(device), bias.to(device)


SPEC = KernelSpec(
    name="layer_norm",
    kernels=(layer_norm_kernel,),
    arguments=(("x", torch.Tensor), ("weight", torch.Tensor), ("bias", torch.Tensor)),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    sizes=(100, 157),
    backward=backward,
    save_for_backward=lambda args, output: (args[0], args[1]),
    backward_kernels=(layer_norm_backward_input_kernel, layer_norm_backward_weight_kernel),
    dynamic_dims={"x": (0,)},
    flops=lambda x_shape, w_shape, b_shape: 8 * x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("reduction", "constexpr-kwarg"),
    description=f"layer_norm over the last dim of a (size, {N_COLS}) fp32 input with weight and bias, eps={EPS}; "
    "backward in Triton (grad_x per row, grad_weight/grad_bias reduced over rows by a second kernel)",
)
