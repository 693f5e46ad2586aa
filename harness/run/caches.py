"""Where a run keeps its caches: one folder per user, under it one per run, and in that one the Inductor and
Triton caches of the controller and of each worker, which every Python they start inherits.

A module of its own that imports nothing of the harness but the atomic copy, so that both the environment a run
enters (harness.run.environment) and the bytecode cache it turns on (harness.run.bytecode) can name the folder.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from harness.atomic import copy_file_atomic


def caches_root() -> Path:
    """The per-user folder under which runs keep their caches: each run's workers' Inductor and Triton caches, bytecode."""
    return Path(tempfile.gettempdir()) / f"tcm-caches-{os.getuid()}"


# the variables that name a process's compile caches, with the name of each one's folder in a worker's caches
CACHE_VARIABLES = (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton"))

RUN_CACHES_VARIABLE = "TCM_RUN_CACHES"  # set by a run's controller: where that run's workers keep their caches
# A folder in which runs started one after another keep their processes' compile caches, by process name, after
# they end (the harness's own test suite sets it for each of its workers): never the same for two runs at once.
KEPT_CACHES_VARIABLE = "TCM_KEEP_CACHES"


def start_run_caches() -> Path:
    """A cache folder of this run alone, named in the environment every process of the run inherits.

    Worker folders used to be named by the zygote's pid and the worker's id, and were kept: a later run on the same
    machine whose zygote got the same pid (pids repeat on a fresh machine) gave its workers an earlier run's
    Inductor caches, so a cell could meet a graph-cache entry another run's cell had compiled
    (docs/maintainers.md, "Order independence"). The controller removes the folder when the run ends.

    The controller's own compile caches go in it too (the zygote's warm-up probes the CPU's vector ISA with small
    compiles there), replacing any folder the environment named: the run writes nothing outside its folder."""
    folder = caches_root() / f"run-{os.getpid()}-{time.time_ns()}"
    os.environ[RUN_CACHES_VARIABLE] = str(folder)
    use_caches_of("controller")
    return folder


def use_caches_of(process: str) -> None:
    """Point this process's Inductor and Triton caches at those of `process` ("controller", a worker's id) in this
    run's folder, or in the kept folder (KEPT_CACHES_VARIABLE) where one is named."""
    kept = os.environ.get(KEPT_CACHES_VARIABLE)
    home = (Path(kept) if kept else run_caches()) / process
    for variable, name in CACHE_VARIABLES:
        os.environ[variable] = str(home / name)


def run_caches() -> Path:
    """This run's cache folder; a process that no run's controller started keeps one of its own parent's."""
    named = os.environ.get(RUN_CACHES_VARIABLE)
    return Path(named) if named else caches_root() / f"parent-{os.getppid()}"


ISA_PROBES = "isa-probes"  # beside the runs' folders, kept from run to run: one folder per torch version


def isa_probes_folder(torch_version: str) -> Path:
    """Where Inductor's CPU ISA probe outputs are kept between runs (harness.run.startup.zygote_warmup).

    Each output is a small C++ library that one candidate ISA's flags built, named by torch from its code, its
    flags and the compiler's version: what this machine's CPU and compiler can build, nothing a cell compiled.
    Torch still loads each one in a child Python before it trusts it."""
    return caches_root() / ISA_PROBES / torch_version.replace("/", "_")


PROBE_MARK = "_chk_kernel"  # every candidate's probe source defines one (torch._inductor.cpu_vec_isa)


def probe_outputs(folder: Path) -> set[Path]:
    """The ISA probe's outputs in an Inductor cache folder: each `<2 characters>/<key>.cpp` that defines a probe
    kernel, and the `.so` built from it (torch names both by the key)."""
    sources = {path for path in folder.glob("*/*.cpp") if PROBE_MARK in path.read_text(errors="replace")}
    return sources | {library for source in sources if (library := source.with_suffix(".so")).is_file()}


def seed_isa_probes(kept: Path, inductor_cache: Path) -> int:
    """Copy the kept probe outputs into a fresh Inductor cache folder before the probe runs; how many."""
    return _copy_missing(kept, probe_outputs(kept), inductor_cache)


def seed_this_process() -> int:
    """Seed the Inductor cache this process and the Pythons it starts use (TORCHINDUCTOR_CACHE_DIR) with the kept
    probe outputs, as the zygote seeds its own: a worker of process isolation is a new Python, not a child of the
    zygote, and without them its first compiling cell, or each new Python it starts for a cell, compiled the probe
    again (measured: docs/maintainers.md, "The harness's own tests"). How many were copied."""
    import torch

    folder = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    return seed_isa_probes(isa_probes_folder(torch.__version__), Path(folder)) if folder else 0


def keep_isa_probes(inductor_cache: Path, kept: Path, before: set[Path]) -> int:
    """After the probe: copy the outputs it added (not in `before`, what the folder held as it started) to the kept
    folder, where that lacks them, for the next run; how many."""
    return _copy_missing(inductor_cache, probe_outputs(inductor_cache) - before, kept)


def _copy_missing(source_folder: Path, sources: set[Path], target_folder: Path) -> int:
    copied = 0
    for source in sorted(sources):
        target = target_folder / source.relative_to(source_folder)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            copy_file_atomic(source, target, keep_metadata=True)  # two runs may copy the same file at once
            copied += 1
    return copied
