"""A reproducer's entry point: one cell, run the way harness.run.cell runs it, ending the way the cell ended.

`python -m harness repro` copies this module's functions into the script it writes (harness.domain.repro),
with the style's builder, the pipeline's runner and everything they reach, so the script runs the
harness's own code with neither the harness nor its catalogue installed. The script re-runs itself
for the pipelines that ask a fresh process (`--fresh-process MODULE ARGV`): that process stops before
the kernel's code (the script puts it after the dispatch), so it never defines the kernel, as a
deployment that never imported the kernel's module would not.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from harness.domain.cell_outcome import failure_verdict
from harness.domain.evidence import error_type, most_specific_line
from harness.domain.fresh_run import FreshRun
from harness.domain.interpreter import enable_autotune_on_interpreter
from harness.domain.machine import device_capability, provided
from harness.domain.pipelines.common import CellContext, StageFailure, staged
from harness.domain.pipelines.requirements import skip_reason
from harness.domain.spec import KernelSpec
from harness.domain.styles import BuiltOp, SkipCell, build_with
from harness.vocab import cell_id, split_style

FRESH_PROCESS_FLAG = "--fresh-process"
Builder = Callable[[KernelSpec, str], BuiltOp]


def fresh_python_of(script: str) -> Callable[[str, list[str], Path, float], FreshRun]:
    """CellContext.fresh_python for a script: `python -I SCRIPT --fresh-process MODULE ARGV`, a new Python."""

    def run(module: str, argv: list[str], log: Path, timeout_s: float) -> FreshRun:
        command = [sys.executable, "-I", script, FRESH_PROCESS_FLAG, module, *argv]
        asked_at = time.time()
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=dict(os.environ))
        output = completed.stdout + completed.stderr
        Path(log).write_text(output)
        return FreshRun(completed.returncode, output, "spawn", asked_at, time.time())

    return run


def import_kernel_op_from_script(consumer_import: dict[str, str]) -> None:
    """export_roundtrip's consumer import, in a reproducer: run the script as a module (its kernel, its spec)
    and build the style's op, as harness.domain.pipelines.export_loader.import_kernel_op does from the registry."""
    namespace = runpy.run_path(consumer_import["source"], run_name="repro_consumer")
    namespace["build_with"](namespace["SPEC"], consumer_import["style"], namespace["BUILDER"])


def run_repro(spec: KernelSpec, style: str, pipeline: str, tier: str, builder: Builder,
              runner: Callable[[CellContext], Any], seed: int = 0, script: str = "") -> int:
    """Run the cell; print PASS, SKIP with the reason, or the traceback and then the outcome line. The exit
    status is 0 for pass and skip, 1 for wrong and fail."""
    base, site = split_style(style)
    cell = cell_id(spec.name, base, pipeline, site)
    if tier == "cpu":
        enable_autotune_on_interpreter()
    torch.manual_seed(seed)
    device = torch.device("cuda" if tier == "gpu" else "cpu")
    try:
        reason = skip_reason(spec, pipeline, tier, device_capability(tier) if spec.requires else None)
        if reason:
            raise SkipCell(reason)
        with staged("build"):
            built = build_with(spec, style, builder)
        with tempfile.TemporaryDirectory(prefix="repro-") as workdir, provided(spec.requires, tier):  # as the harness
            runner(CellContext(spec=spec, built=built, device=device, tier=tier, seed=seed, workdir=Path(workdir),
                               fresh_python=fresh_python_of(script)))
    except SkipCell as skip:
        print(f"SKIP: {cell} cannot be asked here: {skip}")
        return 0
    except StageFailure as failure:
        verdict = failure_verdict(failure)
        traceback.print_exception(failure.error)
        print(f"{verdict.outcome.upper()}: {cell} at stage {verdict.stage}: {verdict.error_type}: {verdict.error}",
              file=sys.stderr)
        return 1
    except Exception as exc:  # outside any stage: the harness records it as a failure to build
        traceback.print_exception(exc)
        print(f"FAIL: {cell} at stage build: {error_type(exc)}: {most_specific_line(exc)}", file=sys.stderr)
        return 1
    print(f"PASS: {cell} matches the reference")
    return 0
