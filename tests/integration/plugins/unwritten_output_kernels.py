"""Two kernels alike but for one line: `writes_output` stores x + y; `never_writes` loads both and stores nothing,
returning the `torch.empty_like` its launch allocated, as a skipped launch or a store to the wrong buffer would.

The reference of both is x + y, computed just before the op runs: where the memory handed back to `empty_like` held
that answer, the unwritten output passed. tests/integration/test_unwritten_output.py runs both through the CLI.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

BLOCK = 1024


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def add_without_store_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    total = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)  # noqa: F841  (never stored)


def _launcher(kernel):
    def launch(wrap, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        wrap(kernel)[(triton.cdiv(x.numel(), BLOCK),)](x, y, out, x.numel(), BLOCK=BLOCK)
        return out

    return launch


def _inputs(size: int, device: torch.device, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    return (torch.randn(size, generator=generator).to(device), torch.randn(size, generator=generator).to(device))


def _spec(name: str, kernel) -> KernelSpec:
    return KernelSpec(name=name, kernels=(kernel,), arguments=(("x", torch.Tensor), ("y", torch.Tensor)),
                      launch=_launcher(kernel), reference=torch.add, make_inputs=_inputs, sizes=(4096, 8192))


SPECS = [_spec("writes_output", add_kernel), _spec("never_writes", add_without_store_kernel)]
