"""Which GPU each pytest-xdist worker gets, decided before CUDA starts in it.

The controller never touches CUDA: it counts GPUs with nvidia-smi (harness.environment.query_gpus)
and hands each new worker the least-used visible GPU, so that N workers on G GPUs are spread
round-robin (worker index modulo G) and a worker replaced after a crash takes the freed GPU.
A user's CUDA_VISIBLE_DEVICES is respected: workers are pinned within it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

Worker = TypeVar("Worker")


def visible_gpus(environ: Mapping[str, str], gpu_count: int) -> list[str]:
    """The GPU names CUDA may use here: the user's CUDA_VISIBLE_DEVICES entries, else 0..gpu_count-1."""
    user = environ.get("CUDA_VISIBLE_DEVICES")
    if user is None:
        return [str(index) for index in range(gpu_count)]
    visible = []
    for entry in user.split(","):
        entry = entry.strip()
        if not entry or entry.startswith("-"):  # CUDA stops at the first invalid entry ("-1" hides every GPU)
            break
        visible.append(entry)
    return visible


def pick_gpu(visible: Sequence[str], in_use: Sequence[str]) -> str | None:
    """The visible GPU held by the fewest live workers (the first one on a tie); None without GPUs."""
    if not visible:
        return None
    return min(visible, key=lambda gpu: (list(in_use).count(gpu), list(visible).index(gpu)))


def deal_across_gpus(workers: Sequence[tuple[Worker, str | None]]) -> list[Worker]:
    """The workers in the order the scheduler deals the first groups to them, one each: a GPU at a time, turning
    back at the end of each round (A B B A A B ...).

    With --durations-from the longest groups lead the queue, and the longest are Hypothesis sweeps of autotuned
    kernels whose time is the GPU's (27 s alone on an H200, 52-91 s beside 15 busy workers). Dealt in the
    workers' start order, three of the four longest landed on one GPU of two and ended that run (README, "Two
    GPUs against one"); dealt this way each GPU gets two. Workers with no GPU keep their order."""
    lanes: dict[str | None, list[Worker]] = {}
    for worker, gpu in workers:
        lanes.setdefault(gpu, []).append(worker)
    order: list[Worker] = []
    turn = 0
    while len(order) < len(workers):
        for lane in (list(lanes.values()) if turn % 2 == 0 else reversed(list(lanes.values()))):
            if lane:
                order.append(lane.pop(0))
        turn += 1
    return order


class GpuPins:
    """The controller's book of which live worker holds which GPU."""

    def __init__(self, visible: Sequence[str]) -> None:
        self.visible = list(visible)
        self.held: dict[str, str] = {}  # live workers
        self.given: dict[str, str] = {}  # every worker ever pinned, for the record of a worker that died

    def assign(self, worker: str) -> str | None:
        gpu = pick_gpu(self.visible, list(self.held.values()))
        if gpu is not None:
            self.held[worker] = gpu
            self.given[worker] = gpu
        return gpu

    def release(self, worker: str) -> None:
        self.held.pop(worker, None)
