"""How a run starts its processes: one warm zygote per run forks the xdist workers and the fresh-process loaders, so
that none of them pays `import torch`, Inductor and its CPU ISA probe again (docs/maintainers.md, "Isolation").

This module is the mechanism's one face: the rest of the harness imports from here, never from the modules below
(an import-linter contract in pyproject.toml holds it). Who starts or forks whom, and when:

    harness run: the controller (harness.cli, then pytest.main in the same process)
     |  1. before it loads the kernels, in worker isolation (the default): zygote_started_ahead makes the run's
     |     caches and the zygote's folder (zygote_client.make_loader_dir), then starts
     |-- python -m compileall ...             bytecode_ahead, only with spare cores and no bytecode of torch's yet:
     |                                        into the bytecode cache (harness.run.bytecode); stopped at the run's end
     |-- python -m harness.run.startup.loader_zygote DIR OWNER TIER
     |     |  the zygote, a new Python (command_lines: TCM_ZYGOTE_PYTHON): binds DIR/zygote.sock, then warms up once
     |     |  (zygote_warmup: the tier, torch, Inductor, the pipelines, warm_imports, the CPU ISA probe), never
     |     |  touching CUDA nor importing a kernel module; then it forks:
     |     |-- AOTInductor's header, built ahead            aoti_header; GPU tier, once after the warm-up
     |     |-- loaders forked ahead, CUDA context made      ready_loaders; GPU tier, 8 per CUDA environment
     |     |-- at a `W` request: an xdist worker            zygote_children.worker_child, runs xdist's CODE
     |     `-- at an `L` request: a loader                  zygote_children.loader_child (or a loader forked ahead)
     |  2. pytest: the plugin adopts that zygote, or starts it now (zygote_client.ensure_started)
     `-- xdist: a worker is `PYTHON -u -c CODE`, PYTHON being
           python -I -S .../startup/zygote_python.py DIR
                the worker's stand-in: hands its stdin, stdout, stderr and environment to the zygote (`W`), waits,
                passes signals on, and exits as the worker did; with no zygote it execs a new Python instead

    in a cell whose pipeline asks for a fresh Python (aoti_fresh_process): fresh_python.run_fresh_python asks the
        zygote for a loader (zygote_client.run_loader, `L`; the first cell to ask starts the zygote when none runs);
        in a run without one, `python -m MODULE`
    a cell in `forked` isolation: a loader that runs harness.run.isolation.cell_worker; in `process` isolation:
        `python -m harness.run.isolation.cell_worker WORKDIR` (command_lines: TCM_CELL_PYTHON)

At the run's end the plugin stops the zygote and removes its folder (`stop`, beside pytest's summary:
harness.run.run_end); a zygote whose run is gone leaves by itself once its children have ended.
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
