"""Dropout with `tl.rand(seed, offsets)`, checked exactly: the reference recomputes Triton's random numbers.

`tl.rand` is Philox-4x32 with 10 rounds, keyed by the seed, counted by the offset, and mapped to [0, 1)
by `uint_to_uniform_float` (triton/language/random.py). `philox_uniform` below is that same algorithm in
PyTorch integer arithmetic, so the reference reproduces the kernel's mask bit for bit rather than
trusting a statistical bound; the kept values are x * 2 (p = 0.5), exact in float32. A pipeline that
drops or re-specializes the seed, or launches with other offsets, gives a different mask and is `wrong`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import BLOCK_SIZE, grid_1d, random_vector

P_DROP = 0.5
SEED = 20251125
MASK32 = 0xFFFFFFFF


@triton.jit
def dropout_rand_kernel(in_ptr, out_ptr, n_elements, seed, P_DROP: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)
    keep = tl.rand(seed, offsets) > P_DROP
    tl.store(out_ptr + offsets, tl.where(keep, x / (1.0 - P_DROP), 0.0), mask=mask)


def launch(wrap, x: torch.Tensor, seed: int) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap(dropout_rand_kernel)[grid_1d(n_elements)](x, out, n_elements, seed, P_DROP=P_DROP, BLOCK_SIZE=BLOCK_SIZE)
    return out


def _product_halves(a: torch.Tensor, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(high, low) 32 bits of the 32 x 32-bit product a * b. The int64 product wraps past 2**63 (two's
    complement, as on every backend), which leaves both halves intact once masked. One product per round
    and value also keeps Inductor from re-expanding the rounds when it compiles the reference."""
    product = a * b
    return (product >> 32) & MASK32, product & MASK32


def philox_uniform(seed: int, offsets: torch.Tensor) -> torch.Tensor:
    """triton.language.random.rand(seed, offsets) for int32 offsets, in PyTorch."""
    c0, c1 = offsets.to(torch.int64) & MASK32, torch.zeros_like(offsets, dtype=torch.int64)
    c2, c3 = torch.zeros_like(c0), torch.zeros_like(c0)
    k0, k1 = seed & MASK32, (seed >> 32) & MASK32
    round_a, round_b, key_a, key_b = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    for _ in range(10):
        high_b, low_b = _product_halves(c2, round_b)
        high_a, low_a = _product_halves(c0, round_a)
        c0, c1, c2, c3 = high_b ^ c1 ^ k0, low_b, high_a ^ c3 ^ k1, low_a
        k0, k1 = (k0 + key_a) & MASK32, (k1 + key_b) & MASK32
    signed = torch.where(c0 >= 2**31, c0 - 2**32, c0)  # the bitcast to int32
    signed = torch.where(signed < 0, -signed - 1, signed)
    return signed.to(torch.float32) * torch.tensor(4.6566127342e-10, dtype=torch.float32)


def reference(x: torch.Tensor, seed: int) -> torch.Tensor:
    offsets = torch.arange(x.numel(), device="cpu", dtype=torch.int32)
    keep = (philox_uniform(seed, offsets) > P_DROP).to(x.device).view(x.shape)
    return torch.where(keep, x / (1.0 - P_DROP), torch.zeros_like(x))


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    return random_vector(size, device, generator), SEED


SPEC = KernelSpec(
    name="random_dropout",
    kernels=(dropout_rand_kernel,),
    arguments=(("x", torch.Tensor), ("seed", int)),
    launch=launch,
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda x_shape, seed: x_shape.numel(),
    accepts_noncontiguous=True,
    features=("random", "scalar-arg", "grid-lambda"),
    description=f"dropout (p={P_DROP}) with tl.rand(seed, offsets), fp32; the reference recomputes Triton's "
    "Philox in PyTorch, so the mask is checked exactly",
)
