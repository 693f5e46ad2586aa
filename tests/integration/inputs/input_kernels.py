"""Kernels with planted input bugs, to prove eager_inputs finds them and names the failing input."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

BLOCK = 64


@triton.jit
def double_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, 2 * tl.load(x_ptr + offsets, mask=mask), mask=mask)


def _double(wrap, x: torch.Tensor, n_programs: int) -> torch.Tensor:
    out = torch.empty_like(x)
    wrap(double_kernel)[(n_programs,)](x, out, x.numel(), BLOCK_SIZE=BLOCK)
    return out


def flat_launch(wrap, x):
    """Claims strided views but indexes flat memory: silently wrong on them."""
    return _double(wrap, x, triton.cdiv(x.numel(), BLOCK))


def dropped_tail_launch(wrap, x):
    """Forgets the last partial block: wrong for every size that is not a multiple of BLOCK."""
    return _double(wrap, x.contiguous(), x.numel() // BLOCK)


def refusing_launch(wrap, x):
    if not x.is_contiguous():
        raise ValueError("double: x must be contiguous")
    return _double(wrap, x, triton.cdiv(x.numel(), BLOCK))


def one_vector(size, device, generator):
    return (torch.randn(size, generator=generator).to(device),)


def _spec(name, launch, accepts_noncontiguous):
    return KernelSpec(name=name, kernels=(double_kernel,), arguments=(("x", torch.Tensor),), launch=launch,
                      reference=lambda x: 2 * x, make_inputs=one_vector, sizes=(100, 150), max_size=300,
                      dtypes=(torch.float32, torch.float16), accepts_noncontiguous=accepts_noncontiguous)


FLAT_CLAIMS_STRIDED = _spec("flat_claims_strided", flat_launch, True)
DROPPED_TAIL = _spec("dropped_tail", dropped_tail_launch, True)
REFUSES_STRIDED = _spec("refuses_strided", refusing_launch, False)
REFUSES_BUT_CLAIMS = _spec("refuses_but_claims", refusing_launch, True)
