"""The two sizes a kernel is timed at, and what a call at a size moves and computes.

Launch-bound: the spec's first matrix size (small enough that launching costs more than computing).
Bandwidth- or compute-bound: the spec's `perf_sizes`, else the largest power of two whose inputs and
outputs together stay within a byte budget (256 MiB on the GPU, far beyond any L2 cache; 64 KiB on the
CPU tier, where Triton's interpreter runs each program in Python).
"""

from __future__ import annotations

from typing import Any

GPU_BYTES_TARGET = 256 * 2**20
CPU_BYTES_TARGET = 64 * 2**10


def _tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    return []


def bytes_moved(args: tuple[Any, ...], output: Any) -> int:
    """Bytes of every tensor argument plus every output tensor: the least a call must read and write."""
    return sum(t.numel() * t.element_size() for t in _tensors(list(args)) + _tensors(output))


def flop_count(spec: Any, args: tuple[Any, ...]) -> int | None:
    import torch

    if spec.flops is None:
        return None
    return int(spec.flops(*(a.shape if isinstance(a, torch.Tensor) else a for a in args)))


def _bytes_at(spec: Any, size: int) -> int:
    """What a call at `size` moves, from meta tensors: nothing is computed or allocated."""
    import torch

    from harness.domain.spec import no_launch_wrap  # deferred: imports torch; the parent plans without it

    args = spec.make_inputs(size, torch.device("meta"), torch.Generator().manual_seed(0))
    with torch.device("meta"):
        output = spec.launch(no_launch_wrap, *args)
    return bytes_moved(args, output)


def large_size(spec: Any, tier: str) -> int:
    """The largest power of two (above the small size) whose call moves at most the tier's byte budget."""
    small = spec.sizes[0]
    first, second = _bytes_at(spec, small), _bytes_at(spec, 2 * small)
    per_unit = max(1, (second - first) // small)
    fixed = max(0, first - per_unit * small)
    target = GPU_BYTES_TARGET if tier == "gpu" else CPU_BYTES_TARGET
    fits = max(1, (target - fixed) // per_unit)
    size = 1 << (fits.bit_length() - 1)
    return max(size, 2 * small)


def perf_sizes(spec: Any, tier: str, override: list[int] | None = None) -> list[int]:
    """The sizes to time: --sizes, else the spec's perf_sizes, else (sizes[0], large_size)."""
    if override:
        return list(override)
    if spec.perf_sizes:
        return list(spec.perf_sizes)
    return [spec.sizes[0], large_size(spec, tier)]
