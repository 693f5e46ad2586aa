"""A fresh Python for a cell's child-side module: forked from the run's loader zygote when the run has one, else new.

Pipelines that ask "does this run in a process that never imported the kernel's module?" (aoti_fresh_process)
get this as `CellContext.fresh_python`, so the domain never knows how processes are made. The zygote imported
torch and Inductor and ran Inductor's CPU ISA probe once, and never imported a kernel module or touched CUDA
(harness.run.startup.loader_zygote); a new Python pays all of that again (about 27 s per AOTI load on the H100). On the GPU
tier the loader may have been forked ahead and made its CUDA context before the request (`how` says so).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from harness.domain.fresh_run import FreshRun
from harness.run.environment import fresh_process_environment
from harness.run.startup.zygote_client import FORKED_AHEAD, LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE, run_loader


def run_fresh_python(module: str, argv: list[str], log: Path, timeout_s: float, tier: str) -> FreshRun:
    """`python -m MODULE ARGV` (MODULE's `main(argv)`) in a process that never imported a kernel module.

    Raises subprocess.TimeoutExpired past `timeout_s`, whichever way it ran."""
    directory, owner = os.environ.get(LOADER_DIR_VARIABLE), os.environ.get(LOADER_OWNER_VARIABLE)
    command = [sys.executable, "-m", module, *argv]
    environment = fresh_process_environment(tier)
    asked_at = time.time()
    if not directory or not owner:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=environment)
        return FreshRun(completed.returncode, completed.stdout + completed.stderr, "spawn", asked_at, time.time())
    run = run_loader(Path(directory), int(owner), tier, module, argv, environment, timeout_s, log)
    answered_at = time.time()
    if run.timed_out:  # as subprocess.run says it, so that both ways give the same outcome
        raise subprocess.TimeoutExpired(command, timeout_s)
    try:
        output = log.read_text(errors="replace")
    except OSError:
        output = ""
    return FreshRun(run.returncode, output, FORKED_AHEAD if run.forked_ahead else "zygote", asked_at, answered_at,
                    run.reaped_at)
