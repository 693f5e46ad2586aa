"""How a run starts its processes: one warm zygote per run forks the xdist workers and the fresh-process loaders, so
that none of them pays `import torch`, Inductor and its CPU ISA probe again (docs/maintainers.md, "Isolation").

This module is the mechanism's one face: the rest of the harness imports from here, never from the modules below
(an import-linter contract in pyproject.toml holds it). Who starts or forks whom, and when:

    harness run (the controller: harness.cli, then pytest.main in the same process)
     |  1. zygote_started_ahead, before the kernels load: the run's caches, the zygote's folder (zygote_client.make_loader_dir)
     |-- python -m compileall ...                       bytecode_ahead: torch's bytecode, on spare cores only,
     |                                                  into the bytecode cache (harness.run.bytecode); stopped at the end
     |-- python -m harness.run.startup.loader_zygote DIR OWNER TIER     a new Python (command_lines: TCM_ZYGOTE_PYTHON)
     |     |  binds DIR/zygote.sock, then warms up (zygote_warmup: the tier, torch, Inductor, the pipelines,
     |     |  warm_imports, the ISA probe); never touches CUDA, never imports a kernel module
     |     |-- fork: AOTInductor's header built ahead                   aoti_header, GPU tier, once
     |     |-- fork: loaders forked ahead, CUDA context made            ready_loaders, GPU tier, 8 per CUDA environment
     |     |-- fork at a `W` request: an xdist worker                   zygote_children.worker_child
     |     `-- fork at an `L` request (or a loader forked ahead): a loader    zygote_children.loader_child
     |  2. pytest: the plugin adopts that zygote (or starts it now: zygote_client.ensure_started)
     `-- xdist: `PYTHON -u -c CODE` per worker, PYTHON being
         python -I -S .../startup/zygote_python.py DIR      the worker's stand-in: hands its stdin, stdout, stderr and
                                                            environment to the zygote (`W`), then waits and passes
                                                            signals on; with no zygote it execs a new Python
    a cell, in a worker, whose pipeline asks for a fresh Python (aoti_fresh_process):
         fresh_python.run_fresh_python -> zygote_client.run_loader (`L`); with no zygote `python -m MODULE`
    a cell in `forked` isolation: run_loader of harness.run.isolation.cell_worker; in `process`
    isolation: `python -m harness.run.isolation.cell_worker` (command_lines: TCM_CELL_PYTHON)

The run's end stops the zygote and removes its folder (zygote_client.stop, from harness.run.run_end); a zygote
whose run is gone leaves by itself once its children have ended.
"""

from pathlib import Path

from harness.run.startup.bytecode_ahead import skipped_folders
from harness.run.startup.command_lines import CELL_PYTHON_VARIABLE, ZYGOTE_PYTHON_VARIABLE, python_command
from harness.run.startup.fresh_python import run_fresh_python
from harness.run.startup.zygote_client import (
    LOADER_DIR_VARIABLE,
    LOADER_OWNER_VARIABLE,
    ZygoteUnavailable,
    ensure_started,
    make_loader_dir,
    read_warmup,
    run_loader,
    stop,
)
from harness.run.startup.zygote_python import STARTED_VARIABLE
from harness.run.startup.zygote_started_ahead import zygote_ahead
from harness.run.startup.zygote_warmup import warm_cpu_isa

WORKER_STAND_IN = str(Path(__file__).resolve().parent / "zygote_python.py")  # run by its path: `python -I -S` it

__all__ = [
    "CELL_PYTHON_VARIABLE",
    "LOADER_DIR_VARIABLE",
    "LOADER_OWNER_VARIABLE",
    "STARTED_VARIABLE",
    "WORKER_STAND_IN",
    "ZYGOTE_PYTHON_VARIABLE",
    "ZygoteUnavailable",
    "ensure_started",
    "make_loader_dir",
    "python_command",
    "read_warmup",
    "run_fresh_python",
    "run_loader",
    "skipped_folders",
    "stop",
    "warm_cpu_isa",
    "zygote_ahead",
]
