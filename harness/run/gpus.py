"""Which GPU each pytest-xdist worker gets, decided before CUDA starts in it.

The controller never touches CUDA: it counts GPUs with nvidia-smi (harness.run.environment.query_gpus)
and hands each new worker the least-used visible GPU, so that N workers on G GPUs are spread
round-robin (worker index modulo G) and a worker replaced after a crash takes the freed GPU.
A user's CUDA_VISIBLE_DEVICES is respected: workers are pinned within it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


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
