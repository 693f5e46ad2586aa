"""The run's zygote's warm-up (harness.run.startup.loader_zygote): what every fresh loader and worker would do first, done
once before the zygote forks any of them.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.run.caches import isa_probes_folder, keep_isa_probes, probe_outputs, seed_isa_probes
from harness.run.environment import enter_tier
from harness.run.startup.warm_imports import warm_imports
from harness.run.startup.zygote_client import WARMUP_FILE

NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"


def warm_up(tier: str) -> None:
    """What every fresh loader and worker would do first, done once: import torch, Inductor and the harness's
    pipelines, and run Inductor's CPU ISA probe, leaving CUDA untouched.

    The probe imports torch.utils.cpp_extension, which asks `torch.cuda.is_available()`; asked the usual way that
    initialises the CUDA driver, and no child forked afterwards could use CUDA ("Cannot re-initialize CUDA in
    forked subprocess"). So the warm-up asks NVML instead (PYTORCH_NVML_BASED_CUDA_CHECK, same answer, no
    driver), and `fork_is_clean` proves it before any loader is forked. Under that check, importing Inductor's
    compiler does not start CUDA either; each worker would otherwise import it before its first cell (measured:
    docs/maintainers.md, "Isolation").
    The ISA candidates are probed at once while the imports run (`_probe_vec_isas`), from outputs kept by the runs
    before (harness.run.caches.isa_probes_folder): on a machine that ran before, the probe compiles nothing, it only
    loads them (docs/maintainers.md, "Isolation").
    """
    enter_tier(tier)
    saved = os.environ.get(NVML_CHECK)
    os.environ[NVML_CHECK] = "1"
    try:
        import torch._inductor.package  # noqa: F401  (what aoti_load_package imports)
        from torch._inductor.cpu_vec_isa import pick_vec_isa
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        kept = isa_probes_folder(torch.__version__)
        inductor_cache = Path(cache_dir())  # TORCHINDUCTOR_CACHE_DIR: the controller's, in the run's folder
        seed_isa_probes(kept, inductor_cache)
        before = probe_outputs(inductor_cache)
        with _probe_vec_isas():
            import harness.domain.pipelines  # noqa: F401  # deferred: imports torch, under the NVML check
            from harness.domain.pipelines import aoti_loader, export_loader  # noqa: F401  # deferred: the loaders' modules, under the NVML check
            warm_imports()
        pick_vec_isa()  # functools-cached per process: every forked loader inherits the answer
        keep_isa_probes(inductor_cache, kept, before)
    finally:
        if saved is None:
            os.environ.pop(NVML_CHECK, None)
        else:
            os.environ[NVML_CHECK] = saved


def warm_cpu_isa() -> None:
    """Inductor's CPU ISA probe, its candidates compiled at once: what a process about to build with
    AOTInductor pays first (`harness perf` asks it before timing a first call). Cached per process."""
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    with _probe_vec_isas():
        pass
    pick_vec_isa()


@contextlib.contextmanager
def _probe_vec_isas() -> Iterator[None]:
    """Inductor's ISA probe, each candidate in a thread of its own, while the body runs; joined at the end.

    `pick_vec_isa` tries the CPU's candidate ISAs one after another, each a C++ compile and a child Python
    (torch <= 2.11: one that imports torch); asked at once they take a third of that time with the same answer
    (docs/maintainers.md, "Isolation"); each answer is cached on its candidate, so `pick_vec_isa` only reads them.
    The candidates are those `valid_vec_isa_list` would try on this CPU; where that cannot be told (another
    architecture, another torch), nothing is asked ahead and `pick_vec_isa` probes as it always did.
    """
    candidates = _vec_isa_candidates()
    if not candidates:
        yield
        return
    with concurrent.futures.ThreadPoolExecutor(len(candidates), thread_name_prefix="isa-probe") as pool:
        for candidate in candidates:
            pool.submit(bool, candidate)
        yield
    # leaving the pool joined its threads: none is left when the zygote forks


def _vec_isa_candidates() -> list[Any]:
    import platform

    try:
        from torch._inductor import cpu_vec_isa

        if sys.platform != "linux" or platform.machine() != "x86_64":
            return []
        flags = cpu_vec_isa.x86_isa_checker()
        return [isa for isa in cpu_vec_isa.supported_vec_isa_list if all(flag in flags for flag in str(isa).split())]
    except (ImportError, AttributeError):
        return []


def record_warmup(directory: Path, started: float, ready: float) -> None:
    """The warm-up is serial time before any worker it forks can start: a run's header says how long it took."""
    write_text_atomic(directory / WARMUP_FILE, json.dumps({"warmup_s": round(ready - started, 3), "ready_at": round(ready, 3)}))
