"""Shared pieces of the elementwise kernels: the tutorial's 1-D grid and random inputs."""

from __future__ import annotations

import torch
import triton

BLOCK_SIZE = 256


def grid_1d(n_elements: int):
    """The tutorial's grid: one program per BLOCK_SIZE elements, as a lambda over `meta`."""
    return lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)


def random_vector(size: int, device: torch.device, generator: torch.Generator, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(size, generator=generator, dtype=torch.float32).to(device=device, dtype=dtype)


def one_random_vector(size: int, device: torch.device, generator: torch.Generator) -> tuple[torch.Tensor]:
    """The inputs of a one-tensor elementwise kernel."""
    return (random_vector(size, device, generator),)


def two_random_vectors(size: int, device: torch.device, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """The inputs of every binary elementwise kernel: two fp32 vectors of `size` elements."""
    return random_vector(size, device, generator), random_vector(size, device, generator)


def refuse_strided_target(kernel: str, x: torch.Tensor) -> None:
    """An in-place kernel cannot copy a strided target (it would write the copy, not x): it refuses it instead."""
    if not x.is_contiguous():
        raise ValueError(f"{kernel} writes x in place through flat indexing: x must be contiguous")
