"""The run's zygote, started by `harness run` before it loads the kernels, so that its warm-up overlaps the
controller's own start.

Why: the workers are forked from the zygote once its warm-up (torch, Dynamo, Inductor, the CPU ISA probe) is done,
and nothing else can start a cell. Started by the pytest plugin, the zygote began only after the controller had
imported torch and triton, loaded and checked every kernel and planned the run (measured: docs/maintainers.md,
"Isolation"). Started here it needs only the tier, which is read without importing torch
(harness.run.environment.torch_cuda_version).

The zygote is the one the plugin would start (same folder layout, owner, tier, caches); the plugin adopts it
(`--matrix-zygote-ahead`). It started before the run knew its worker count, so without the run's share of the cores
for torch's threads: each child it forks sizes them from its own environment, as a new Python would
(harness.run.startup.zygote_children.take_environment).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from harness.run.caches import start_run_caches
from harness.run.startup.bytecode_ahead import start_compiling_ahead, stop_compiling
from harness.run.startup.zygote_client import ZygoteUnavailable, ensure_started, make_loader_dir, stop
from harness.run.startup.zygote_python import STARTED_VARIABLE

AHEAD_ISOLATION = "worker"  # the isolation whose workers are forked from the zygote


@contextlib.contextmanager
def zygote_ahead(tier: str, isolation: str) -> Iterator[Path | None]:
    """This run's zygote folder, its zygote started and warming up; None where the run forks no worker from one, or
    it could not start (the plugin then starts one as it always did, and says why if it cannot either).

    Whatever happens before the plugin takes it over (a bad spec, nothing to run, an interrupt), the zygote is
    stopped and the run's cache folder removed on leaving; after the plugin's run both are gone already."""
    if isolation != AHEAD_ISOLATION:
        yield None
        return
    os.environ.pop(STARTED_VARIABLE, None)  # as the plugin does before its zygote starts: no run inherits another's
    run_folder = start_run_caches()  # the zygote's own caches are the controller's, in the run's folder
    directory = make_loader_dir()
    compiler = start_compiling_ahead()  # a machine with no bytecode yet: the zygote's imports find it compiled
    try:
        ensure_started(directory, os.getpid(), tier)
    except ZygoteUnavailable:
        _clean_up(directory, run_folder, compiler)
        yield None
        return
    try:
        yield directory
    finally:
        _clean_up(directory, run_folder, compiler)


def _clean_up(directory: Path, run_folder: Path, compiler: subprocess.Popen | None) -> None:
    stop(directory)
    stop_compiling(compiler)
    shutil.rmtree(run_folder, ignore_errors=True)
