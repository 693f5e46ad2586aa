"""Kernels made to misbehave, loaded with `--kernels-from`, to prove that isolation holds.

Each fault lives in the launch, so every style that launches (not `native`) meets it, and only
where it is meant to: an eager fault only when the launch really runs eagerly (under Dynamo the
launch is traced, `torch.compiler.is_compiling()` is True, and the kernel behaves as `add`), the
compile fault only while Dynamo traces. The `after_*` witnesses are ordinary kernels defined after
the faults, so in a one-worker run they execute after every fault, in the same worker, and must be
untouched by them. The `fault_gpu_*` faults mean something only on a GPU; tests ask them there only.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec, identity_wrap
from kernels import add, sin

# Markdown, HTML and 10,000 characters on the first line, then more lines: what a report must never let through raw.
HOSTILE_FIRST_LINE = ("| **bold** | <script>alert('x')</script> <img src=x onerror=alert(1)> [link](javascript:alert(1))"
                      " `code` # heading ~~strike~~ $math$ " + "A" * 10_000)
HOSTILE_MESSAGE = HOSTILE_FIRST_LINE + "\n## a second line\n| a | table |\n|---|---|\n</table></details>"


def _launching_eagerly(wrap) -> bool:
    """A real launch outside Dynamo: fake/meta probes and traced launches stay harmless."""
    return wrap is identity_wrap and not torch.compiler.is_compiling()


def _being_traced(wrap) -> bool:
    return torch.compiler.is_compiling()


def _fault(name: str, misbehave, when=_launching_eagerly) -> KernelSpec:
    def launch(wrap, x, y):
        if when(wrap):
            misbehave(x)
        return add.launch(wrap, x, y)

    return dataclasses.replace(add.SPEC, name=name, launch=launch, description=f"fault injection: {name}")


def _segfault(x) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def _abort(x) -> None:
    os.abort()


def _sleep_forever(x) -> None:
    time.sleep(24 * 3600)


def _exit_silently(x) -> None:
    os._exit(3)


def _trace_forever(x) -> None:
    """Under Dynamo this loop is symbolically executed, and never ends: a compile that hangs."""
    while True:
        pass


def _raise_hostile(x) -> None:
    raise RuntimeError(HOSTILE_MESSAGE)


def _corrupt_then_raise(x) -> None:
    """Leave the process poisoned four ways, then fail: a later cell in this process would see all of it."""
    import harness.domain.checking

    def nothing_allowed(*args, **kwargs):
        raise AssertionError("monkey-patched checker: nothing is within the allowance")

    harness.domain.checking.allowance = nothing_allowed  # a monkey-patched module: every check fails
    torch.empty_like = lambda x, **kwargs: torch.zeros(1, dtype=x.dtype)  # a monkey-patched torch
    torch._dynamo.config.suppress_errors = True  # a changed torch config
    torch.library.define("tcm_fault::leftover", "(Tensor x) -> Tensor")  # an extra registered op
    raise RuntimeError("raised after corrupting the checker, torch.empty_like, a dynamo config and the op registry")


def _corrupt_torch_then_raise(x) -> None:
    """A changed torch config, an extra kernel registered on an existing op, a monkey-patched harness module."""
    import harness.domain.pipelines.common

    torch.set_default_device("meta")  # every later factory call makes meta tensors
    library = torch.library.Library("aten", "IMPL")  # add.Tensor now returns zeros on CPU and CUDA
    for key in ("CPU", "CUDA"):
        library.impl("add.Tensor", lambda a, b, alpha=1: a.new_zeros(torch.broadcast_shapes(a.shape, b.shape)), key)
    _LEFTOVERS.append(library)  # keep the registration alive, as a leaked handle would

    def never_matches(*args, **kwargs):
        raise AssertionError("monkey-patched checker: nothing matches")

    harness.domain.pipelines.common.assert_close = never_matches
    raise RuntimeError("raised after setting the default device to meta, overriding aten::add and patching the checker")


_LEFTOVERS: list[object] = []


@triton.jit
def _wild_store_kernel(out_ptr, offset, BLOCK: tl.constexpr):
    index = tl.arange(0, BLOCK)
    tl.store(out_ptr + offset + index, tl.zeros((BLOCK,), tl.float32))


@triton.jit
def _spin_kernel(flag_ptr):
    flag = tl.load(flag_ptr, volatile=True)
    while flag == 0:  # the flag is never set
        flag = tl.load(flag_ptr, volatile=True)


def _illegal_address(x) -> None:
    """A store 4 TiB past a float32 tensor: CUDA's illegal memory access."""
    _wild_store_kernel[(1,)](x, 1 << 40, BLOCK=128)


def _kernel_never_ends(x) -> None:
    _spin_kernel[(1,)](torch.zeros(1, dtype=torch.int32, device=x.device))


def _allocate_past_memory(x) -> None:
    torch.empty(10**13, dtype=torch.uint8, device=x.device)  # 10 TB


SPECS = [
    _fault("fault_segfault", _segfault),
    _fault("fault_abort", _abort),
    _fault("fault_hang", _sleep_forever),
    _fault("fault_exit", _exit_silently),
    _fault("fault_dirty", _corrupt_then_raise),
    _fault("fault_compile_hang", _trace_forever, when=_being_traced),
    _fault("fault_markdown", _raise_hostile),
    _fault("fault_dirty_torch", _corrupt_torch_then_raise),
    _fault("fault_gpu_illegal_address", _illegal_address),
    _fault("fault_gpu_kernel_never_ends", _kernel_never_ends),
    _fault("fault_gpu_out_of_memory", _allocate_past_memory),
    dataclasses.replace(add.SPEC, name="after_add"),
    dataclasses.replace(sin.SPEC, name="after_sin"),
]
