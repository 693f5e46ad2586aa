"""The environment a run measures, and which tier it is: read without initialising CUDA.

The parent of every cell must never touch CUDA (cells are forked from it), so the GPU
is found through nvidia-smi rather than torch.cuda.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import runpy
import shutil
import subprocess
import sys
from typing import Any

from harness.domain.interpreter import INTERPRETER_AUTOTUNE, enable_autotune_on_interpreter
from harness.domain.poison import poison_in_force
from harness.run.bytecode import enable_bytecode_cache
from harness.run.compile_caches import graph_caches_policy


def query_gpus() -> list[dict[str, str]]:
    """Name and driver of each GPU nvidia-smi sees; empty without a GPU or nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        completed = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if completed.returncode != 0:
        return []
    gpus = []
    for line in completed.stdout.strip().splitlines():
        name, _, driver = line.partition(",")
        gpus.append({"name": name.strip(), "driver": driver.strip()})
    return gpus


def resolve_tier(requested: str = "auto") -> str:
    """`gpu` when torch is a CUDA build and a GPU is visible, else the CPU interpreter tier."""
    if requested in ("gpu", "cpu"):
        return requested
    return "gpu" if torch_cuda_version() and query_gpus() else "cpu"


def torch_cuda_version() -> str | None:
    """`torch.version.cuda`, without importing torch where it is not imported yet.

    `harness run` asks the tier before it loads the kernels, to start its zygote (harness.cli): importing torch for
    it would put seconds before that start. torch/version.py is a file torch's build writes, which imports only
    `typing`; where it cannot be read so, torch is imported."""
    spec = importlib.util.find_spec("torch") if "torch" not in sys.modules else None
    if spec is not None and spec.submodule_search_locations:
        try:
            cuda = runpy.run_path(os.path.join(next(iter(spec.submodule_search_locations)), "version.py")).get("cuda")
            return cuda if isinstance(cuda, str) else None
        except Exception:  # noqa: BLE001  (an unreadable file: torch itself says, below)
            pass
    import torch

    return torch.version.cuda


def enter_tier(tier: str) -> None:
    """The CPU tier runs Triton kernels in its interpreter; this must happen before any kernel is decorated.

    On the GPU every isolated cell would start Inductor's own pool of compile workers; the cell's process
    compiles instead, which was faster with identical outcomes (docs/maintainers.md, "Isolation"). A value the
    user set is kept. On both tiers, the Pythons a run starts get a bytecode cache where the environment forbids
    one (harness.run.bytecode).
    """
    enable_bytecode_cache()
    if tier == "gpu":
        os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    if tier == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        enable_autotune_on_interpreter()


def describe(tier: str) -> dict[str, Any]:
    import torch
    import triton

    gpus = query_gpus() if tier == "gpu" else []
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "gpu": gpus[0]["name"] if gpus else None,
        "driver": gpus[0]["driver"] if gpus else None,
        "gpu_count": len(gpus),
        "tier": tier,
        "interpreter": os.environ.get("TRITON_INTERPRET") == "1",
        "os": platform.platform(),
        "cpu_count": usable_cpu_count(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "ld_preload": os.environ.get("LD_PRELOAD") or None,
        "interpreter_autotune": INTERPRETER_AUTOTUNE if tier == "cpu" else None,
        "pycache_prefix": os.environ.get("PYTHONPYCACHEPREFIX"),
        "omp_num_threads": os.environ.get(CPU_THREADS_VARIABLE),
        "graph_caches": graph_caches_policy(),
        "poison": poison_in_force(),
    } | ({"fresh_process_cuda_connections": fresh_cuda_queues()} if tier == "gpu" else {})


CPU_THREADS_VARIABLE = "OMP_NUM_THREADS"  # sizes PyTorch's intra-op pool (and OpenMP's) in every process it reaches


def share_cores(workers: int) -> str | None:
    """Give each of `workers` processes running cells at once its share of the cores for PyTorch's CPU threads.

    Each process sizes its intra-op pool to the whole machine, so N workers run N x cores threads at once, and
    the same cells cost more CPU time than with one thread each (measured: docs/maintainers.md, "Isolation");
    torchrun sets the same variable for the same reason. Set in the controller before any worker or zygote starts, so every Python
    of the run reads it when it loads torch. A value the user set is kept. Returns the value in force."""
    if workers > 1 and CPU_THREADS_VARIABLE not in os.environ:
        os.environ[CPU_THREADS_VARIABLE] = str(max(1, (usable_cpu_count() or 1) // workers))
    return os.environ.get(CPU_THREADS_VARIABLE)


# How many hardware work queues the CUDA driver gives each context it makes (8 unless set).
FRESH_CUDA_QUEUES_VARIABLE = "CUDA_DEVICE_MAX_CONNECTIONS"
FRESH_CUDA_QUEUES = "1"


def fresh_process_environment(tier: str) -> dict[str, str]:
    """The environment of a cell's fresh process: this process's, and on the GPU tier one work queue per CUDA
    context unless the user set how many.

    Why: the driver makes and tears down contexts one at a time, with their queues, and the GPU default makes
    hundreds of fresh processes; with one queue each, the driver makes them about three times as fast (measured:
    docs/maintainers.md, "Isolation"). A fresh process loads and runs one program on one stream, which one queue
    serves. A value the user set is kept, and the run's header records the value in force. The workers keep the
    driver's default: their cells may use several streams."""
    environment = dict(os.environ)
    if tier == "gpu":
        environment[FRESH_CUDA_QUEUES_VARIABLE] = fresh_cuda_queues()
    return environment


def fresh_cuda_queues() -> str:
    """The work queues a fresh process's CUDA context gets on the GPU tier: the user's value, else one."""
    return os.environ.get(FRESH_CUDA_QUEUES_VARIABLE, FRESH_CUDA_QUEUES)


def usable_cpu_count() -> int | None:
    """The cores this process may run on (a `taskset` or a cgroup cpuset narrows them), not the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


def environment_tag(environment: dict[str, Any]) -> str:
    """A filename-safe name for results of this environment: tier, GPU, torch, triton."""
    parts = [environment.get("tier", "unknown")]
    if environment.get("gpu"):
        parts.append(str(environment["gpu"]).replace("NVIDIA ", "").split()[0].lower())
    parts.append(f"torch{environment.get('torch')}")
    parts.append(f"triton{environment.get('triton')}")
    tag = "-".join(parts)
    return "".join(c if c.isalnum() or c in "._+-" else "_" for c in tag)
