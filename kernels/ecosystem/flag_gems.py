"""FlagGems (`flag-gems==5.0.2`) as published: six of its kernels, with their backward where FlagGems has one, launched
the way FlagGems' own functions launch them (docs/ecosystem.md).

FlagGems ships no autograd: its functions are registered over aten operators (`flag_gems.enable()`,
`with flag_gems.use_gems():`), forward and backward apart (`silu` and `silu_backward`, `_softmax` and
`_softmax_backward_data`, `native_layer_norm` and `native_layer_norm_backward`), so PyTorch's own autograd calls them.
A spec must not do that at import: the `native` control would then run FlagGems instead of aten (the harness refuses
such a plug-in). Each spec launches FlagGems' kernels itself, through `wrap`.

Most pointwise kernels do not exist in FlagGems' sources: `@pointwise_dynamic` turns a scalar `@triton.jit` function
(`silu_forward(x)`) into a `PointwiseDynamicFunction`, which writes a module per rank into FlagGems' code cache
(`~/.flaggems/code_cache`) the first time it runs, with a wrapper and a `@libentry() @triton.jit` kernel. A user finds
that kernel as FlagGems itself does: `function.instantiate(rank)` writes and imports the module and returns the wrapper,
`function.get_kernel_info(rank)` names the kernel in it (`generated_kernel` below). The spec launches it with the
arguments the generated wrapper passes on its fast path (contiguous operands of one shape: rank 1).

Every FlagGems kernel is wrapped in `@libentry()` (FlagGems' own launch cache, a `triton.KernelInterface` that is neither
a JITFunction nor an Autotuner): what `wrap_triton` and torch.compile make of that is a question the matrix asks.
References: FlagGems ships none; plain PyTorch (aten). Run: `python -m harness run --kernels-from
kernels.ecosystem.flag_gems` (FlagGems needs a GPU to import: it looks for a device at import and raises without one).
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
import triton

from harness import KernelSpec
from kernels.ecosystem._requires import require

VERSION = require("flag-gems", "5.0.2", "flaggems")

import flag_gems  # noqa: E402,F401  (registers nothing over aten: that takes flag_gems.enable())
from flag_gems.ops.layernorm import (  # noqa: E402
    layer_norm_backward_kernel,
    layer_norm_persistent_kernel,
    weight_bias_backward_kernel,
)
from flag_gems.ops.softmax import softmax_backward_kernel_inner, softmax_kernel_inner  # noqa: E402
from flag_gems.runtime import torch_device_fn  # noqa: E402
from flag_gems.utils.shape_utils import heuristics_for_num_warps, heuristics_for_tile_size  # noqa: E402

# `flag_gems.ops` re-exports each op's function under the module's own name, so the modules come from sys.modules.
OPS = {name: sys.modules[f"flag_gems.ops.{name}"] for name in ("add", "silu", "gelu", "sigmoid")}
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
HIDDEN = 384
TILE_BOUND = re.compile(r"heuristics_for_tile_size\((\d+),")


def _on_device(tensor: torch.Tensor) -> Any:
    """FlagGems' `with torch_device_fn.device(...)` around each launch. On meta tensors (the harness sizes a
    custom_op's backward by launching nothing on them) FlagGems' call would raise, so there it is left out."""
    return contextlib.nullcontext() if tensor.device.type == "meta" else torch_device_fn.device(tensor.device)


def _described(text: str) -> str:
    return f"FlagGems {VERSION}: {text}"


class GeneratedKernel:
    """The rank-1 kernel FlagGems generates for a `@pointwise_dynamic` function, and the tile bound its wrapper uses."""

    def __init__(self, function: Any) -> None:
        wrapper = function.instantiate(1)  # writes the module into FlagGems' code cache and imports it
        info = function.get_kernel_info(1)
        self.kernel = wrapper.__globals__[info.kernel_name]
        # The bound written into the generated wrapper: FlagGems halves its 512 when every input's declared dtype is
        # complex, and an input declares none, so it is read from the code FlagGems wrote, not recomputed here.
        found = TILE_BOUND.search(Path(info.file_path).read_text(encoding="utf-8"))
        self.max_tile_size = int(found.group(1)) if found else function.config.max_tile_size

    def launch(self, wrap: Any, tensors: tuple[torch.Tensor, ...], scalars: tuple[Any, ...] = ()) -> torch.Tensor:
        """As the generated wrapper launches on its fast path: one task per element, tiles of at most the bound, a
        grid of at most 65536 programs, stride 1 and stride order 0 for every operand."""
        tensors = tuple(t.contiguous() for t in tensors)
        out = torch.empty_like(tensors[0])
        n = out.numel()
        tile = heuristics_for_tile_size(self.max_tile_size, n)[0]
        tiles = triton.cdiv(n, tile)
        programs = min(65536, tiles)
        tiles_per_cta = triton.cdiv(tiles, programs)
        strides = [value for _ in (*tensors, out) for value in (1, 0)]
        with _on_device(out):
            wrap(self.kernel)[(programs, 1, 1)](
                *tensors, *scalars, out, *strides, n, n, tiles_per_cta=tiles_per_cta, tile_size0=tile,
                one_tile_per_cta=tiles_per_cta == 1, num_warps=heuristics_for_num_warps(tile))
        return out


def _rows(size, device, generator, count=1):
    return tuple(torch.randn(size, HIDDEN, generator=generator).to(device) for _ in range(count))


# ---- pointwise, generated: add (no backward in FlagGems), silu, gelu (tanh), sigmoid ----

ADD = GeneratedKernel(OPS["add"].add_func)


def add_launch(wrap, x, y, alpha):
    return ADD.launch(wrap, (x, y), (alpha,))


ADD_SPEC = KernelSpec(
    name="flag_gems_add",
    kernels=(ADD.kernel,),
    arguments=(("x", torch.Tensor), ("y", torch.Tensor), ("alpha", float)),
    launch=add_launch,
    reference=lambda x, y, alpha: torch.add(x, y, alpha=alpha),
    make_inputs=lambda size, device, gen: (*_rows(size, device, gen, 2), 0.5),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("pointwise-generated", "libentry", "block-pointer", "do-not-specialize", "scalar-arg"),
    description=_described("x + alpha * y: the rank-1 kernel @pointwise_dynamic generates for add_func (FlagGems has "
                           "no add backward); plain PyTorch reference"),
)

SILU, SILU_BACKWARD = GeneratedKernel(OPS["silu"].silu_forward), GeneratedKernel(OPS["silu"].silu_backward_kernel)


def silu_launch(wrap, x):
    return SILU.launch(wrap, (x,))


def silu_backward(wrap, x, dy):
    return (SILU_BACKWARD.launch(wrap, (x, dy)),)


SILU_SPEC = KernelSpec(
    name="flag_gems_silu",
    kernels=(SILU.kernel,),
    arguments=(("x", torch.Tensor),),
    launch=silu_launch,
    reference=F.silu,
    make_inputs=lambda size, device, gen: _rows(size, device, gen),
    backward=silu_backward,
    save_for_backward=lambda args, output: (args[0],),
    backward_kernels=(SILU_BACKWARD.kernel,),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("pointwise-generated", "libentry", "block-pointer"),
    description=_described("SiLU (aten::silu) and its backward (aten::silu_backward): two generated kernels; plain "
                           "PyTorch reference"),
)

GELU, GELU_BACKWARD = GeneratedKernel(OPS["gelu"].gelu_tanh), GeneratedKernel(OPS["gelu"].gelu_backward_tanh)


def gelu_launch(wrap, x):
    return GELU.launch(wrap, (x,))


def gelu_backward(wrap, x, dy):
    return (GELU_BACKWARD.launch(wrap, (x, dy)),)


GELU_SPEC = KernelSpec(
    name="flag_gems_gelu_tanh",
    kernels=(GELU.kernel,),
    arguments=(("x", torch.Tensor),),
    launch=gelu_launch,
    reference=lambda x: F.gelu(x, approximate="tanh"),
    make_inputs=lambda size, device, gen: _rows(size, device, gen),
    backward=gelu_backward,
    save_for_backward=lambda args, output: (args[0],),
    backward_kernels=(GELU_BACKWARD.kernel,),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("pointwise-generated", "libentry", "block-pointer", "libdevice"),
    requires=("libdevice",),
    description=_described("GELU, tanh approximation (aten::gelu, aten::gelu_backward): generated kernels through "
                           "FlagGems' tl_extra_shim (libdevice); plain PyTorch reference"),
)

SIGMOID = GeneratedKernel(OPS["sigmoid"].sigmoid_forward)
SIGMOID_BACKWARD = GeneratedKernel(OPS["sigmoid"].sigmoid_backward_kernel)


def sigmoid_launch(wrap, x):
    return SIGMOID.launch(wrap, (x,))


def sigmoid_backward(wrap, y, dy):
    return (SIGMOID_BACKWARD.launch(wrap, (dy, y)),)  # sigmoid_backward_kernel(dy, y), as aten::sigmoid_backward


SIGMOID_SPEC = KernelSpec(
    name="flag_gems_sigmoid",
    kernels=(SIGMOID.kernel,),
    arguments=(("x", torch.Tensor),),
    launch=sigmoid_launch,
    reference=torch.sigmoid,
    make_inputs=lambda size, device, gen: _rows(size, device, gen),
    backward=sigmoid_backward,
    save_for_backward=lambda args, output: (output,),
    backward_kernels=(SIGMOID_BACKWARD.kernel,),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("pointwise-generated", "libentry", "block-pointer", "libdevice"),
    requires=("libdevice",),
    description=_described("sigmoid (aten::sigmoid, aten::sigmoid_backward, which reads the output): generated "
                           "kernels; plain PyTorch reference"),
)


# ---- softmax over the last dim: flag_gems/ops/softmax.py softmax / softmax_backward, the inner (K == 1) path ----

def softmax_launch(wrap, x):
    x = x.contiguous()
    M, N = x.shape
    out = torch.empty_like(x)
    with _on_device(x):
        wrap(softmax_kernel_inner)[(M, 1, 1)](out, x, M, N)
    return out


def softmax_backward(wrap, y, dy):
    dy = dy.contiguous()
    M, N = y.shape
    dx = torch.empty_like(y)
    with _on_device(dx):
        wrap(softmax_backward_kernel_inner)[lambda meta: (triton.cdiv(M, meta["TILE_M"]), 1, 1)](y, dy, dx, M, N)
    return (dx,)


SOFTMAX_SPEC = KernelSpec(
    name="flag_gems_softmax",
    kernels=(softmax_kernel_inner,),
    arguments=(("x", torch.Tensor),),
    launch=softmax_launch,
    reference=lambda x: torch.softmax(x, dim=-1),
    make_inputs=lambda size, device, gen: _rows(size, device, gen),
    backward=softmax_backward,
    save_for_backward=lambda args, output: (output,),
    backward_kernels=(softmax_backward_kernel_inner,),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("libentry", "heuristics", "autotune", "reduction", "grid-tuple"),
    description=_described("softmax over the last dim (aten::_softmax, aten::_softmax_backward_data): libentry over "
                           "heuristics from FlagGems' per-GPU tables; the backward autotuned; plain PyTorch reference"),
)


# ---- LayerNorm: flag_gems/ops/layernorm.py layer_norm / layer_norm_backward, 128 < N <= 4096 ----

def layer_norm_launch(wrap, x, weight, bias, eps):
    x, weight, bias = x.contiguous(), weight.contiguous(), bias.contiguous()  # as flag_gems.ops.layernorm does
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, dtype=x.dtype, device=x.device)
    rstd = torch.empty(M, dtype=x.dtype, device=x.device)
    with _on_device(x):
        wrap(layer_norm_persistent_kernel)[(M, 1, 1)](x, y, weight, bias, mean, rstd, M, N, eps,
                                                      triton.next_power_of_2(N))
    return y, mean, rstd


def layer_norm_backward(wrap, x, weight, bias, mean, rstd, dy):
    dy, x, weight = dy.contiguous(), x.contiguous(), weight.contiguous()  # as flag_gems.ops.layernorm does
    M, N = x.shape
    dx = torch.empty_like(x)
    with _on_device(x):
        wrap(layer_norm_backward_kernel)[lambda meta: (triton.cdiv(M, meta["BLOCK_ROW_SIZE"]), 1, 1)](
            dy, x, weight, mean, rstd, dx, M, N)
    dw, db = torch.empty_like(weight), torch.empty_like(bias)
    with _on_device(x):
        wrap(weight_bias_backward_kernel)[lambda meta: (triton.cdiv(N, meta["BLOCK_COL_SIZE"]), 1, 1)](
            dy, x, mean, rstd, dw, db, M, N)
    return dx, dw, db


def _layer_norm_inputs(size, device, generator):
    x, = _rows(size, device, generator)
    weight = (1 + 0.1 * torch.randn(HIDDEN, generator=generator)).to(device)
    return x, weight, (0.1 * torch.randn(HIDDEN, generator=generator)).to(device), 1e-5


LAYER_NORM_SPEC = KernelSpec(
    name="flag_gems_layer_norm",
    kernels=(layer_norm_persistent_kernel,),
    arguments=(("x", torch.Tensor), ("weight", torch.Tensor), ("bias", torch.Tensor), ("eps", float)),
    launch=layer_norm_launch,
    reference=lambda x, weight, bias, eps: F.layer_norm(x, (x.shape[-1],), weight, bias, eps),
    make_inputs=_layer_norm_inputs,
    backward=layer_norm_backward,
    save_for_backward=lambda args, launched: (args[0], args[1], args[2], launched[1], launched[2]),
    backward_kernels=(layer_norm_backward_kernel, weight_bias_backward_kernel),
    saved_intermediates=("mean", "rstd"),
    dtypes=FLOATS,
    accepts_noncontiguous=True,
    features=("libentry", "autotune", "do-not-specialize", "saved-intermediate", "reduction"),
    description=_described("LayerNorm (aten::native_layer_norm and its backward): the persistent row kernel, dX and "
                           "dW/dB by two autotuned kernels; plain PyTorch reference"),
)

SPECS = [ADD_SPEC, SILU_SPEC, GELU_SPEC, SIGMOID_SPEC, SOFTMAX_SPEC, LAYER_NORM_SPEC]
