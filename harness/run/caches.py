"""Where a run keeps its caches: one folder per user, under it one per run, and in that one the Inductor and
Triton caches of the controller and of each worker, which every Python they start inherits.

A module of its own that imports nothing of the harness, so that both the environment a run enters
(harness.run.environment) and the bytecode cache it turns on (harness.run.bytecode) can name the folder.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


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
