"""Liger-Kernel (`liger-kernel==0.8.5`) as published: seven of its kernels, forward and backward, launched the way
Liger's own `*_forward` / `*_backward` functions launch them (docs/ecosystem.md).

Liger wraps every kernel the same way: a raw launch inside a `torch.autograd.Function` whose methods carry
`@ensure_contiguous`. Each spec's `launch` and `backward` is that function's body with each `kernel[grid](...)`
written `wrap(kernel)[grid](...)`, Liger's own helpers (`calculate_settings`, `device_context`) and its defaults
kept: RMSNorm's backward writes dX into dY (`in_place=True`), SwiGLU's and GeGLU's write their gradients into the
saved inputs, as Liger does; the specs declare those writes (`backward_mutates`) instead of hiding them.

References: Liger ships two in `liger_kernel.testing._op_helpers` (RMSNorm, LayerNorm); the rest are plain PyTorch.
Run: `python -m harness run --kernels-from kernels.ecosystem.liger`. Liger calls `torch.cuda.is_available()` at
import; the harness never forks a process that imported a plug-in, and `PYTORCH_NVML_BASED_CUDA_CHECK=1` keeps that
one call from initialising CUDA.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F
import triton

from harness import KernelSpec
from kernels.ecosystem._requires import require

VERSION = require("liger-kernel", "0.8.5", "liger")

from liger_kernel.ops.dyt import _dyt_bwd_kernel, _dyt_fwd_kernel  # noqa: E402
from liger_kernel.ops.geglu import _geglu_tanh_backward_kernel, _geglu_tanh_forward_kernel  # noqa: E402
from liger_kernel.ops.layer_norm import _layer_norm_backward_kernel, _layer_norm_forward_kernel  # noqa: E402
from liger_kernel.ops.relu_squared import _relu_squared_backward_kernel, _relu_squared_forward_kernel  # noqa: E402
from liger_kernel.ops.rms_norm import _rms_norm_backward_kernel, _rms_norm_forward_kernel  # noqa: E402
from liger_kernel.ops.softmax import (  # noqa: E402
    _softmax_single_block_backward_kernel,
    _softmax_single_block_forward_kernel,
)
from liger_kernel.ops.swiglu import _swiglu_backward_kernel, _swiglu_forward_kernel  # noqa: E402
from liger_kernel.ops.utils import calculate_settings, device_context, torch_to_triton_dtype  # noqa: E402
from liger_kernel.testing._op_helpers import pytorch_reference_layer_norm, pytorch_reference_rms_norm  # noqa: E402

HIDDEN = 384  # a model's hidden size in miniature: not a power of two, so every kernel's column mask is asked
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
LLAMA = 0  # Liger's _CASTING_MODE_LLAMA: RSTD in fp32, the default of LigerRMSNormFunction


def _rows(size: int, device: torch.device, generator: torch.Generator, count: int = 1) -> tuple[torch.Tensor, ...]:
    return tuple(torch.randn(size, HIDDEN, generator=generator).to(device) for _ in range(count))


def _sm_count(x: torch.Tensor) -> int:
    """Liger's backward grid: one program per SM on CUDA, one elsewhere (liger_kernel/ops/rms_norm.py)."""
    return torch.cuda.get_device_properties(x.device).multi_processor_count if x.device.type == "cuda" else 1


def _described(text: str) -> str:
    return f"Liger-Kernel {VERSION}: {text}"


# ---- RMSNorm: liger_kernel/ops/rms_norm.py rms_norm_forward / rms_norm_backward (row path, llama casting) ----


def ensure_contiguous(launch):
    """What Liger's `ensure_contiguous` does around each autograd.Function method (liger_kernel/ops/utils.py): every
    tensor argument, weights included, made contiguous before its kernels see it."""

    @functools.wraps(launch)
    def contiguous_launch(wrap, *args, **kwargs):
        args = tuple(arg.contiguous() if isinstance(arg, torch.Tensor) else arg for arg in args)
        kwargs = {k: v.contiguous() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        return launch(wrap, *args, **kwargs)

    return contiguous_launch


@ensure_contiguous
def rms_norm_launch(wrap, x, weight, eps, offset):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    block, warps = calculate_settings(n_cols)
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    with device_context(x.device):
        wrap(_rms_norm_forward_kernel)[(n_rows,)](
            y, y.stride(0), x, x.stride(0), weight, weight.stride(0), rstd, rstd.stride(0), n_cols, eps, offset,
            LLAMA, elementwise_affine=True, BLOCK_SIZE=block, num_warps=warps)
    return y, rstd


@ensure_contiguous
def rms_norm_backward(wrap, x, weight, rstd, dy, *, offset):
    dy = dy.contiguous()
    n_rows, n_cols = dy.shape
    sm_count = _sm_count(x)
    block, warps = calculate_settings(n_cols)
    partial_dw = torch.empty((sm_count, n_cols), dtype=torch.float32, device=weight.device)
    dx = dy  # Liger's default in_place=True: dX is written over dY
    with device_context(x.device):
        wrap(_rms_norm_backward_kernel)[(sm_count,)](
            dy, dy.stride(0), dx, dx.stride(0), x, x.stride(0), torch_to_triton_dtype[x.dtype], weight,
            weight.stride(0), rstd, rstd.stride(0), partial_dw, partial_dw.stride(0), n_rows, n_cols, offset,
            math.ceil(n_rows / sm_count), LLAMA, elementwise_affine=True, BLOCK_SIZE=block, COMPUTE_DW=True,
            num_warps=warps)
    return dx, partial_dw.sum(dim=0).to(weight.dtype)


def _norm_inputs(size, device, generator):
    x, = _rows(size, device, generator)
    weight = (1 + 0.1 * torch.randn(HIDDEN, generator=generator)).to(device)
    return x, weight


RMS_NORM = KernelSpec(
    name="liger_rms_norm",
    kernels=(_rms_norm_forward_kernel,),
    arguments=(("x", torch.Tensor), ("weight", torch.Tensor), ("eps", float), ("offset", float)),
    launch=rms_norm_launch,
    reference=lambda x, weight, eps, offset: pytorch_reference_rms_norm(x, weight, eps, offset, "llama"),
    make_inputs=lambda size, device, gen: (*_norm_inputs(size, device, gen), 1e-6, 0.0),
    differentiable=("x", "weight"),
    backward=rms_norm_backward,
    save_for_backward=lambda args, launched: (args[0], args[1], launched[1]),
    backward_kernels=(_rms_norm_backward_kernel,),
    saved_intermediates=("rstd",),
    backward_scalars=("offset",),
    backward_mutates=("grad0",),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("saved-intermediate", "scalar-to-backward", "partial-sum-reduction", "dtype-constexpr", "libdevice"),
    requires=("libdevice",),
    description=_described("RMSNorm, llama casting; saved RSTD, fp32 per-SM partial dW, dX written over dY "
                           "(in_place=True, Liger's default); reference liger_kernel.testing's pytorch_reference_rms_norm"),
)


# ---- LayerNorm: liger_kernel/ops/layer_norm.py layer_norm_forward / layer_norm_backward ----

@ensure_contiguous
def layer_norm_launch(wrap, x, weight, bias, eps):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    block, warps = calculate_settings(n_cols)
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    mean = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    wrap(_layer_norm_forward_kernel)[(n_rows,)](
        y, y.stride(0), x, x.stride(0), weight, weight.stride(0), bias, bias.stride(0), mean, mean.stride(0), rstd,
        rstd.stride(0), n_cols, eps, BLOCK_SIZE=block, num_warps=warps)
    return y, mean, rstd


@ensure_contiguous
def layer_norm_backward(wrap, x, weight, mean, rstd, dy):
    dy = dy.contiguous()
    n_rows, n_cols = dy.shape
    sm_count = _sm_count(x)
    block, warps = calculate_settings(n_cols)
    partial_dw = torch.empty((sm_count, n_cols), dtype=torch.float32, device=weight.device)
    partial_db = torch.empty((sm_count, n_cols), dtype=torch.float32, device=weight.device)
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    wrap(_layer_norm_backward_kernel)[(sm_count,)](
        x, x.stride(0), weight, mean, mean.stride(0), rstd, rstd.stride(0), dx, dx.stride(0), partial_dw,
        partial_dw.stride(0), partial_db, partial_db.stride(0), dy, dy.stride(0), n_rows, n_cols,
        rows_per_program=math.ceil(n_rows / sm_count), BLOCK_SIZE=block, COMPUTE_DW=True, COMPUTE_DB=True,
        num_warps=warps)
    return dx, partial_dw.sum(dim=0).to(weight.dtype), partial_db.sum(dim=0).to(weight.dtype)


def _layer_norm_inputs(size, device, generator):
    x, weight = _norm_inputs(size, device, generator)
    return x, weight, (0.1 * torch.randn(HIDDEN, generator=generator)).to(device), 1e-6


LAYER_NORM = KernelSpec(
    name="liger_layer_norm",
    kernels=(_layer_norm_forward_kernel,),
    arguments=(("x", torch.Tensor), ("weight", torch.Tensor), ("bias", torch.Tensor), ("eps", float)),
    launch=layer_norm_launch,
    reference=pytorch_reference_layer_norm,
    make_inputs=_layer_norm_inputs,
    differentiable=("x", "weight", "bias"),
    backward=layer_norm_backward,
    save_for_backward=lambda args, launched: (args[0], args[1], launched[1], launched[2]),
    backward_kernels=(_layer_norm_backward_kernel,),
    saved_intermediates=("mean", "rstd"),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("saved-intermediate", "partial-sum-reduction", "libdevice"),
    requires=("libdevice",),
    description=_described("LayerNorm; saved mean and RSTD, fp32 per-SM partial dW and dB; reference "
                           "liger_kernel.testing's pytorch_reference_layer_norm"),
)


# ---- SwiGLU and GeGLU: liger_kernel/ops/swiglu.py, geglu.py; the backward writes da, db over the saved a, b ----

@ensure_contiguous
def swiglu_launch(wrap, a, b):
    a, b = a.contiguous(), b.contiguous()
    n_rows, n_cols = a.shape
    c = torch.empty_like(a)
    block, warps = calculate_settings(n_cols)
    with device_context(a.device):
        wrap(_swiglu_forward_kernel)[(n_rows,)](a, b, c, c.stride(-2), 1.0, n_cols=n_cols, BLOCK_SIZE=block,
                                                num_warps=warps)
    return c


@ensure_contiguous
def swiglu_backward(wrap, a, b, dc):
    dc = dc.contiguous()
    n_rows, n_cols = dc.shape
    block, warps = calculate_settings(n_cols)
    with device_context(a.device):
        wrap(_swiglu_backward_kernel)[(n_rows,)](dc, a, b, dc.stride(-2), 1.0, n_cols=n_cols, BLOCK_SIZE=block,
                                                 num_warps=warps)
    return a, b  # Liger returns the saved inputs, now holding the gradients


SWIGLU = KernelSpec(
    name="liger_swiglu",
    kernels=(_swiglu_forward_kernel,),
    arguments=(("a", torch.Tensor), ("b", torch.Tensor)),
    launch=swiglu_launch,
    reference=lambda a, b: F.silu(a) * b,
    make_inputs=lambda size, device, gen: _rows(size, device, gen, 2),
    backward=swiglu_backward,
    save_for_backward=lambda args, output: (args[0], args[1]),
    backward_kernels=(_swiglu_backward_kernel,),
    backward_mutates=("saved0", "saved1"),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("jit-calls-jit", "scalar-arg"),
    requires=("gpu",),  # `gate_multiplier.to(tl.float32)` on a float argument: the interpreter's float has no .to
    description=_described("SwiGLU silu(a) * b (LigerSiLUMulFunction); the backward writes da, db over the saved a, b "
                           "and returns them, as Liger does; plain PyTorch reference"),
)


@ensure_contiguous
def geglu_launch(wrap, a, b):
    a, b = a.contiguous(), b.contiguous()
    n_rows, n_cols = a.shape
    c = torch.empty_like(a)
    block, warps = calculate_settings(n_cols)
    with device_context(a.device):
        wrap(_geglu_tanh_forward_kernel)[(n_rows,)](a, b, c, c.stride(-2), n_cols=n_cols, BLOCK_SIZE=block,
                                                    num_warps=warps)
    return c


@ensure_contiguous
def geglu_backward(wrap, a, b, dc):
    dc = dc.contiguous()
    n_rows, n_cols = dc.shape
    block, warps = calculate_settings(n_cols)
    with device_context(a.device):
        wrap(_geglu_tanh_backward_kernel)[(n_rows,)](dc, a, b, dc.stride(-2), n_cols=n_cols, BLOCK_SIZE=block,
                                                     num_warps=warps)
    return a, b


GEGLU = KernelSpec(
    name="liger_geglu",
    kernels=(_geglu_tanh_forward_kernel,),
    arguments=(("a", torch.Tensor), ("b", torch.Tensor)),
    launch=geglu_launch,
    reference=lambda a, b: F.gelu(a, approximate="tanh") * b,
    make_inputs=lambda size, device, gen: _rows(size, device, gen, 2),
    backward=geglu_backward,
    save_for_backward=lambda args, output: (args[0], args[1]),
    backward_kernels=(_geglu_tanh_backward_kernel,),
    backward_mutates=("saved0", "saved1"),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("libdevice",),
    requires=("libdevice",),
    description=_described("GeGLU gelu_tanh(a) * b (LigerGELUMulFunction), libdevice tanh; the backward writes da, db "
                           "over the saved a, b; plain PyTorch reference"),
)


# ---- Softmax: liger_kernel/ops/softmax.py, the single-block path Liger takes for rows of up to 65536 columns ----

@ensure_contiguous
def softmax_launch(wrap, x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    block, warps = calculate_settings(n_cols)
    y = torch.empty_like(x)
    wrap(_softmax_single_block_forward_kernel)[(n_rows,)](y, y.stride(0), x, x.stride(0), n_cols, BLOCK_SIZE=block,
                                                          num_warps=warps)
    return y


@ensure_contiguous
def softmax_backward(wrap, y, dy):
    dy = dy.contiguous()
    n_rows, n_cols = dy.shape
    block, warps = calculate_settings(n_cols)
    dx = torch.empty_like(dy)
    wrap(_softmax_single_block_backward_kernel)[(n_rows,)](dy, dy.stride(0), y, y.stride(0), dx, dx.stride(0), n_cols,
                                                           BLOCK_SIZE=block, num_warps=warps)
    return (dx,)


SOFTMAX = KernelSpec(
    name="liger_softmax",
    kernels=(_softmax_single_block_forward_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=softmax_launch,
    reference=lambda x: torch.softmax(x, dim=-1),
    make_inputs=lambda size, device, gen: _rows(size, device, gen),
    backward=softmax_backward,
    save_for_backward=lambda args, output: (output,),
    backward_kernels=(_softmax_single_block_backward_kernel,),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("reduction",),
    description=_described("row softmax (LigerSoftmaxFunction), single-block kernels; the backward reads the saved "
                           "output; plain PyTorch reference"),
)


# ---- ReLU²: liger_kernel/ops/relu_squared.py (the README's example) ----

@ensure_contiguous
def relu_squared_launch(wrap, x):
    x, y = x.contiguous(), torch.empty_like(x)
    wrap(_relu_squared_forward_kernel)[(x.shape[0],)](
        y, y.stride(0), x, x.stride(0), n_cols=x.shape[1], BLOCK_SIZE=triton.next_power_of_2(x.shape[1]))
    return y


@ensure_contiguous
def relu_squared_backward(wrap, x, dy):
    dy, dx = dy.contiguous(), torch.empty_like(x)
    wrap(_relu_squared_backward_kernel)[(x.shape[0],)](
        dx, dx.stride(0), dy, dy.stride(0), x, x.stride(0), n_cols=x.shape[1],
        BLOCK_SIZE=triton.next_power_of_2(x.shape[1]))
    return (dx,)


RELU_SQUARED = KernelSpec(
    name="liger_relu_squared",
    kernels=(_relu_squared_forward_kernel,),
    arguments=(("x", torch.Tensor),),
    launch=relu_squared_launch,
    reference=lambda x: torch.relu(x) ** 2,
    make_inputs=lambda size, device, gen: _rows(size, device, gen),
    backward=relu_squared_backward,
    save_for_backward=lambda args, output: (args[0],),
    backward_kernels=(_relu_squared_backward_kernel,),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("constexpr-kwarg",),
    description=_described("ReLU² (the README's example); plain PyTorch reference"),
)


# ---- DyT: liger_kernel/ops/dyt.py liger_dyt_fwd / liger_dyt_bwd: autotuned, reset_to_zero, libdevice tanh ----

@ensure_contiguous
def dyt_launch(wrap, x, alpha, gamma, beta):
    x = x.contiguous()
    rows, columns = x.shape
    y = torch.empty_like(x)
    wrap(_dyt_fwd_kernel)[lambda meta: (triton.cdiv(columns, meta["BLOCK_N"]), rows)](
        x, y, alpha, gamma, beta, True, columns)
    return y


@ensure_contiguous
def dyt_backward(wrap, x, alpha, gamma, dy):
    dy = dy.contiguous()
    rows, columns = x.shape
    programs = _sm_count(x)
    partial_da = torch.zeros(programs, triton.cdiv(columns, 512), dtype=torch.float32, device=x.device)
    partial_dg = torch.empty(programs, columns, dtype=torch.float32, device=x.device)
    partial_db = torch.empty(programs, columns, dtype=torch.float32, device=x.device)
    dx = torch.empty_like(dy)
    wrap(_dyt_bwd_kernel)[lambda meta: (triton.cdiv(columns, meta["BLOCK_N"]), programs)](
        dy, dx, partial_da, partial_dg, partial_db, x, alpha, gamma, True, rows, columns)
    return (dx, partial_da.sum().to(x.dtype).unsqueeze(0), partial_dg.sum(0).to(gamma.dtype),
            partial_db.sum(0).to(x.dtype))


def dyt_reference(x, alpha, gamma, beta):
    return gamma * torch.tanh(alpha * x) + beta


def _dyt_inputs(size, device, generator):
    x, gamma = _norm_inputs(size, device, generator)
    return x, torch.full((1,), 0.5).to(device), gamma, (0.1 * torch.randn(HIDDEN, generator=generator)).to(device)


DYT = KernelSpec(
    name="liger_dyt",
    kernels=(_dyt_fwd_kernel,),
    arguments=(("x", torch.Tensor), ("alpha", torch.Tensor), ("gamma", torch.Tensor), ("beta", torch.Tensor)),
    launch=dyt_launch,
    reference=dyt_reference,
    make_inputs=_dyt_inputs,
    backward=dyt_backward,
    save_for_backward=lambda args, output: (args[0], args[1], args[2]),
    backward_kernels=(_dyt_bwd_kernel,),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("autotune", "reset-to-zero", "grid-lambda", "libdevice"),
    requires=("libdevice",),
    description=_described("Dynamic Tanh gamma * tanh(alpha * x) + beta (LigerDyTFunction): autotuned kernels, "
                           "reset_to_zero in the backward, per-SM partial sums; plain PyTorch reference"),
)

SPECS = [RMS_NORM, LAYER_NORM, SWIGLU, GEGLU, SOFTMAX, RELU_SQUARED, DYT]
