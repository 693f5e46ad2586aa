"""How many workers `-n auto` starts: one per core, fewer where memory would run out.

Measured limits behind the budgets (docs/maintainers.md, "Worker count"): a CPU-tier worker that has compiled
and exported holds about 1.5 GiB, and an AOTInductor build adds a g++ of about 1 GiB; on the GPU each worker
holds a CUDA context and its caching allocator, a few GiB at most for the catalogue's sizes. The controller
never touches CUDA: GPU memory comes from nvidia-smi.
"""

from __future__ import annotations

import os
import shutil
import subprocess

CPU_WORKER_GIB = 3.0  # host memory a worker may need, AOTI build included
GPU_WORKER_GIB = 4.0  # device memory a worker may need


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def host_memory_gib() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


def gpu_memory_gib() -> list[float]:
    """Total memory of each GPU nvidia-smi sees (empty without one)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        completed = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if completed.returncode != 0:
        return []
    return [float(line) / 1024 for line in completed.stdout.split() if line.strip().replace(".", "", 1).isdigit()]


def auto_worker_count(tier: str, cores: int | None = None, host_gib: float | None = None,
                      gpus_gib: list[float] | None = None) -> int:
    """Workers for `-n auto`: the cores, capped by host memory, and on the GPU tier by the GPUs' memory."""
    cores = usable_cores() if cores is None else cores
    host_gib = host_memory_gib() if host_gib is None else host_gib
    count = cores
    if host_gib:
        count = min(count, int(host_gib // CPU_WORKER_GIB))
    if tier == "gpu":
        gpus_gib = gpu_memory_gib() if gpus_gib is None else gpus_gib
        if gpus_gib:
            count = min(count, sum(int(gib // GPU_WORKER_GIB) for gib in gpus_gib))
    return max(1, count)


def workers_for_groups(count: int, groups: int) -> int:
    """`-n auto`'s count for a selection of `groups` groups: a worker with no group to run would only start, collect
    the whole matrix (and, on the GPU, make a CUDA context), and wait. An explicit `-n` is kept as asked."""
    return max(1, min(count, groups))


def resolve_worker_count(requested: str, tier: str) -> int:
    """`auto` or a positive integer, as given to `-n`; a ValueError names what is wrong."""
    if requested == "auto":
        return auto_worker_count(tier)
    try:
        count = int(requested)
    except ValueError:
        raise ValueError(f"-n/--workers: {requested!r} is not a number or 'auto'") from None
    if count < 1:
        raise ValueError(f"-n/--workers: {count} is below 1")
    return count
