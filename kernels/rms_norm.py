"""RMSNorm over the last dim, written as Liger-Kernel writes it: the spec fits the kernel, not the other way round.

The forward saves each row's RSTD for the backward (`saved_intermediates`) instead of returning it; the
backward computes grad_x per row and grad_weight as per-program fp32 partial sums (each program sums over
its block of rows, then torch sums over programs), the reduction most fused norms use. The weight is
applied as `offset + weight` (Gemma's convention; 0 for Llama), and the backward needs that offset: a float
argument that reaches it through `backward_scalars`. eps is used by the forward only: once RSTD is saved the
backward has no need of it.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

N_COLS = 100  # not a power of two: the row block is masked
EPS = 1e-6
OFFSET = 1.0  # a real, non-zero offset: a backward that lost it computes the wrong grad_x and grad_weight
CPU_PROGRAMS = 8  # programs of the backward on the CPU tier; on a GPU, one per SM as Liger does


@triton.jit
def rms_norm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_cols, eps, offset, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32) + offset
    tl.store(y_ptr + row * n_cols + cols, x * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_norm_backward_kernel(
    grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, grad_w_partial_ptr, n_rows, n_cols, offset, rows_per_program,
    BLOCK_N: tl.constexpr,
):
    program = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32) + offset
    grad_w = tl.zeros((BLOCK_N,), dtype=tl.float32)  # this program's partial sum, in fp32 as Liger keeps it
    start = program * rows_per_program
    end = tl.minimum(start + rows_per_program, n_rows)
    for row in range(start, end):
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        grad = tl.load(grad_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        weighted = grad * w
        grad_x = rstd * weighted - rstd * rstd * rstd * (tl.sum(weighted * x, axis=0) / n_cols) * x
        tl.store(grad_x_ptr + row * n_cols + cols, grad_x, mask=mask)
        grad_w += grad * x * rstd
    tl.store(grad_w_partial_ptr + program * n_cols + cols, grad_w, mask=mask)


def launch(wrap, x: torch.Tensor, weight: torch.Tensor, eps: float, offset: float):
    """Returns (y, rstd): the output, then the intermediate the spec saves for the backward."""
    x, weight = x.contiguous(), weight.contiguous()  # flat row indexing: copy strided views
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty((n_rows,), device=x.device, dtype=torch.float32)
    wrap(rms_norm_forward_kernel)[(n_rows,)](x, weight, y, rstd, n_cols, eps, offset, BLOCK_N=triton.next_power_of_2(n_cols))
    return y, rstd


def program_count(device: torch.device, n_rows: int) -> int:
    programs = torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else CPU_PROGRAMS
    return max(1, min(programs, n_rows))


def backward(wrap, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor, grad: torch.Tensor, *, offset: float):
    x, grad = x.contiguous(), grad.contiguous()  # autograd may hand an expanded (stride 0) gradient
    n_rows, n_cols = x.shape
    programs = program_count(x.device, n_rows)
    rows_per_program = triton.cdiv(n_rows, programs)
    grad_x = torch.empty_like(x)
    grad_w_partial = torch.empty((programs, n_cols), device=x.device, dtype=torch.float32)
    wrap(rms_norm_backward_kernel)[(programs,)](
        grad, x, weight, rstd, grad_x, grad_w_partial, n_rows, n_cols, offset, rows_per_program,
        BLOCK_N=triton.next_power_of_2(n_cols),
    )
    return grad_x, grad_w_partial.sum(dim=0).to(weight.dtype)


def reference(x: torch.Tensor, weight: torch.Tensor, eps: float, offset: float) -> torch.Tensor:
    wide = x.float()
    rstd = torch.rsqrt(wide.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (wide * rstd * (offset + weight.float())).to(x.dtype)


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    x = torch.randn((size, N_COLS), generator=generator)
    weight = 0.1 * torch.randn((N_COLS,), generator=generator)  # Gemma-style: the effective weight is 1 + w
    return x.to(device), weight.to(device), EPS, OFFSET


SPEC = KernelSpec(
    name="rms_norm",
    kernels=(rms_norm_forward_kernel,),
    arguments=(("x", torch.Tensor), ("weight", torch.Tensor), ("eps", float), ("offset", float)),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    sizes=(256, 389),
    backward=backward,
    save_for_backward=lambda args, launched: (args[0], args[1], launched[1]),
    backward_kernels=(rms_norm_backward_kernel,),
    dynamic_dims={"x": (0,)},
    flops=lambda x_shape, w_shape, eps, offset: 4 * x_shape.numel(),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    accepts_noncontiguous=True,
    features=("reduction", "saved-intermediate", "scalar-to-backward", "partial-sum-reduction"),
    description=f"RMSNorm (Liger-style) over the last dim of a (size, {N_COLS}) input, y = x * rstd * (offset + w); "
    "the forward saves RSTD for the backward, the backward reduces grad_weight as per-program fp32 partial sums",
    saved_intermediates=("rstd",),
    backward_scalars=("offset",),
    dynamic_bounds=(2, 1 << 16),
)
