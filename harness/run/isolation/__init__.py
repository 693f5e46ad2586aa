"""Keeps a segfault, a hang, a poisoned CUDA context or changed global state in the cell that caused it.

This module is the isolation's face: the rest of the harness imports from here (an import-linter contract in
pyproject.toml holds it). `run_isolated` runs a cell in the mode asked (`modes`: `worker`, `process`, `forked`),
`run_inline` in this process (tests), `end_waited_on_cells` kills the cell processes other threads wait on (an
interrupt during confirmation); `worker_mode` is the xdist worker's side, which the plugin's hooks drive
(configure a worker, retire it after a fault, the `crash` of a worker that died). Behind it: `cell_worker`, the
child's entry point (`python -m harness.run.isolation.cell_worker WORKDIR`, or forked from the run's zygote through
harness.run.startup), `death`, what a dead process said last, and `global_state`, the process-wide state a cell can
leave behind in a worker.
"""

from harness.run.isolation import worker_mode
from harness.run.isolation.modes import end_waited_on_cells, run_inline, run_isolated

__all__ = ["end_waited_on_cells", "run_inline", "run_isolated", "worker_mode"]
