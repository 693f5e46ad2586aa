"""Keeps a segfault, a hang, a poisoned CUDA context or changed global state in the cell that caused it.

Two mechanisms, compared cell by cell by `python -m harness bench` (docs/maintainers.md):
- `worker` (the default): the cell runs in a long-lived pytest-xdist worker, which is replaced after a crash,
  a timeout, a CUDA error or a change of global state (harness.run.isolation.worker_mode).
- `process`: a brand-new interpreter per cell (`python -m harness.run.isolation.cell_worker`), the slow reference.
  The parent only waits, reads the child's result file, and turns a death or a timeout into `crash` or
  `timeout`, naming the stage the child had reached.
- `forked` (not a choice of `--isolation`): the same child side and evidence, in a child forked from the run's
  zygote, which imported torch and Inductor and never a kernel module nor CUDA: what a new worker is before its
  first cell. A worker uses it for a control it cannot run itself after a failed cell (harness.plugin.
  pytest_plugin.judge_by_control); a new interpreter cost that control about 6 CPU seconds on the CPU tier and 7 to
  10 s on the H100, most of it importing torch and Inductor again (docs/maintainers.md, "Isolation").
No process that imported a plug-in or touched CUDA is ever forked to run a cell: a library that sets up a
runtime at import (CUDA, a thread pool, a pid check) refuses to work in such a child.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from harness.results import CellResult
from harness.run.cell import CellRequest, execute_cell, result_for
from harness.run.isolation.death import compact_stacks, death_evidence
from harness.run.isolation.worker_mode import run_in_worker
from harness.run.options import DEFAULT_ISOLATION, FORKED_ISOLATION, ISOLATION_MODES
from harness.run.startup import (
    CELL_PYTHON_VARIABLE,
    LOADER_DIR_VARIABLE,
    LOADER_OWNER_VARIABLE,
    ZygoteUnavailable,
    python_command,
    run_fresh_python,
    run_loader,
)


def stage_writer(path: Path) -> Callable[[str], None]:
    def mark(stage: str) -> None:
        path.write_text(stage)

    return mark


def child_main(request: CellRequest, workdir: Path) -> int:
    """Body of the child: run the cell, write result.json; exit code 0 once it is written."""
    import faulthandler

    log = open(workdir / "child.log", "a", buffering=1)
    faulthandler.enable(log)
    result = execute_cell(request, workdir, run_fresh_python, stage_marker=stage_writer(workdir / "stage"))
    (workdir / "result.json").write_text(json.dumps(result.to_record()))
    return 0


# The new Pythons of `process` isolation this process is waiting on, from any thread: each runs in a session of its
# own (so that its whole group can be killed), which the terminal's Ctrl-C does not reach.
_waited_on: set[int] = set()
_waited_on_lock = threading.Lock()


def end_waited_on_cells() -> None:
    """Kill every `process`-isolation cell a thread of this process is waiting on. An interrupt reaches only the main
    thread; the threads that confirm changed cells (harness.run.confirm) would otherwise wait out each try's limit."""
    with _waited_on_lock:
        for pid in list(_waited_on):
            _kill_group(pid)


def _run_process(request: CellRequest, workdir: Path, timeout_s: float) -> tuple[int | None, bool]:
    with open(workdir / "child.log", "ab") as log:
        child = subprocess.Popen(
            [*python_command(CELL_PYTHON_VARIABLE), "-m", "harness.run.isolation.cell_worker", str(workdir)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        with _waited_on_lock:
            _waited_on.add(child.pid)
        try:
            return child.wait(timeout=timeout_s), False
        except subprocess.TimeoutExpired:
            _kill_group(child.pid)
            child.wait()
            return None, True
        except BaseException:
            _kill_group(child.pid)
            child.wait()
            raise
        finally:
            with _waited_on_lock:
                _waited_on.discard(child.pid)


def _run_forked(request: CellRequest, workdir: Path, timeout_s: float) -> tuple[int | None, bool]:
    """The child forked from the run's zygote; a new interpreter where the run has no zygote or it cannot answer."""
    directory, owner = os.environ.get(LOADER_DIR_VARIABLE), os.environ.get(LOADER_OWNER_VARIABLE)
    if not directory or not owner:
        return _run_process(request, workdir, timeout_s)
    try:
        run = run_loader(Path(directory), int(owner), request.tier, "harness.run.isolation.cell_worker", [str(workdir)],
                         dict(os.environ), timeout_s, workdir / "child.log")
    except ZygoteUnavailable:
        return _run_process(request, workdir, timeout_s)
    return (None, True) if run.timed_out else (run.returncode, False)


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
            return
        except (ProcessLookupError, PermissionError):
            continue


def _child_log(workdir: Path) -> str:
    try:
        return (workdir / "child.log").read_text(errors="replace")
    except OSError:
        return ""


def run_inline(request: CellRequest) -> CellResult:
    """Run a cell in this process, for debugging and tests only: a fault here takes the caller with it."""
    workdir = Path(tempfile.mkdtemp(prefix="tcm-cell-"))
    try:
        return execute_cell(request, workdir, run_fresh_python)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_isolated(request: CellRequest, timeout_s: float, mode: str = DEFAULT_ISOLATION,
                 keep_workdir: bool = False) -> CellResult:
    if mode not in (*ISOLATION_MODES, FORKED_ISOLATION):
        raise ValueError(f"unknown isolation mode {mode!r}; choose from {', '.join(ISOLATION_MODES)}")
    if mode == "worker":
        return run_in_worker(request, timeout_s)
    workdir = Path(tempfile.mkdtemp(prefix=f"tcm-{request.kernel}-{request.style}-{request.pipeline}-"))
    started = time.perf_counter()
    try:
        (workdir / "request.json").write_text(json.dumps(request.to_dict()))  # what either child reads (cell_worker)
        launch = _run_forked if mode == FORKED_ISOLATION else _run_process
        exit_code, timed_out = launch(request, workdir, timeout_s)
        elapsed = round(time.perf_counter() - started, 3)
        stage_file = workdir / "stage"
        stage = stage_file.read_text().strip() if stage_file.exists() else "build"
        result_file = workdir / "result.json"
        if timed_out:
            return result_for(request, "timeout", stage=stage, error_type="Timeout",
                              error=f"no result after {timeout_s:g} s in stage {stage}; the cell's process group was killed",
                              duration_s=elapsed)
        if exit_code == 0 and result_file.exists():
            result = CellResult.from_record(json.loads(result_file.read_text()))
            result.detail["isolation"] = mode
            return result
        log = _child_log(workdir)
        signal_name = signal.Signals(-exit_code).name if exit_code is not None and exit_code < 0 else None
        kind, message = death_evidence("the cell's process", signal_name, exit_code, stage, log)
        return result_for(request, "crash", stage=stage, error_type=kind, error=message,
                          duration_s=elapsed, detail={"log_tail": compact_stacks(log), "isolation": mode})
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
