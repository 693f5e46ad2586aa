"""Runs each cell in a process of its own, so a segfault, a hang or a poisoned CUDA context stays in that cell.

Three mechanisms, compared by `python -m harness bench` (README):
- `fork`: the caller (a pytest worker that has imported torch and triton, and on the CPU tier Dynamo and
  Inductor too, but never touched CUDA) forks one child per cell; the child pays no import cost.
- `process`: a brand-new interpreter per cell (`python -m harness.run.cell_worker`), the reference.
- `worker`: no process per cell; the cell runs in the pytest-xdist worker itself, which is replaced
  after a crash, a timeout or a CUDA error (harness.run.worker_mode).
In the first two the parent only waits, reads the child's result file, and turns a death or a
timeout into `crash` or `timeout`, naming the stage the child had reached.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from harness.results import CellResult
from harness.run.cell import CellRequest, execute_cell, result_for

ISOLATION_MODES = ("fork", "process", "worker")
# Imported once in a CPU-tier fork parent and in the run's zygote (harness.run.loader_zygote, both tiers), so that no forked
# cell or worker pays for them (seconds a cell, measured in README).
WARM_IMPORTS = ("torch._dynamo", "torch._inductor.compile_fx")
LOG_TAIL_CHARS = 1000


def stage_writer(path: Path) -> Callable[[str], None]:
    def mark(stage: str) -> None:
        path.write_text(stage)

    return mark


def child_main(request: CellRequest, workdir: Path) -> int:
    """Body of the child: run the cell, write result.json; exit code 0 once it is written."""
    import faulthandler

    log = open(workdir / "child.log", "a", buffering=1)
    faulthandler.enable(log)
    result = execute_cell(request, workdir, stage_marker=stage_writer(workdir / "stage"))
    (workdir / "result.json").write_text(json.dumps(result.to_record()))
    return 0


def warm_imports() -> None:
    """What most cells import lazily, imported here once: each forked cell would otherwise pay seconds for it."""
    import importlib

    for name in WARM_IMPORTS:
        importlib.import_module(name)


def _run_forked(request: CellRequest, workdir: Path, timeout_s: float) -> tuple[int | None, bool]:
    if request.tier != "gpu":  # on the GPU, importing Inductor queries the device and initialises CUDA: no fork after that
        warm_imports()
    pid = os.fork()
    if pid == 0:  # child
        code = 70
        try:
            os.setsid()
            log_fd = os.open(workdir / "child.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(log_fd, 1)
            os.dup2(log_fd, 2)
            code = child_main(request, workdir)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status), False
            if time.monotonic() > deadline:
                _kill_group(pid)
                os.waitpid(pid, 0)
                return None, True
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
    except BaseException:  # KeyboardInterrupt included: never leave a child behind
        _kill_group(pid)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        raise


def _run_process(request: CellRequest, workdir: Path, timeout_s: float) -> tuple[int | None, bool]:
    (workdir / "request.json").write_text(json.dumps(request.to_dict()))
    with open(workdir / "child.log", "ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "harness.run.cell_worker", str(workdir)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
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


def death_evidence(who: str, signal_name: str | None, exit_code: int | None, stage: str, log: str) -> tuple[str, str]:
    """(error type, first line) for a process that died without a result: the signal or exit code, then its last words."""
    if signal_name:
        kind, message = signal_name, f"{who} died of {signal_name} in stage {stage}"
    else:
        kind, message = "ProcessExited", f"{who} exited with code {exit_code} in stage {stage} without a result"
    death = death_line(log)
    return kind, f"{message}: {death}" if death else message


def death_line(log: str) -> str:
    """What a dying child said: faulthandler's 'Fatal Python error' and the innermost Python frame, else its last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if line.startswith("Fatal Python error"):
            after = lines[index + 1:]
            current = [i for i, text in enumerate(after) if text.startswith("Current thread")]
            frames = [f for f in after[current[0] if current else 0:] if f.startswith("File ")]
            return f"{line} ({frames[0]})" if frames else line
    return lines[-1] if lines else ""


def run_isolated(request: CellRequest, timeout_s: float, mode: str = "fork", keep_workdir: bool = False) -> CellResult:
    if mode not in ISOLATION_MODES:
        raise ValueError(f"unknown isolation mode {mode!r}; choose from {', '.join(ISOLATION_MODES)}")
    if mode == "worker":
        from harness.run.worker_mode import run_in_worker

        return run_in_worker(request, timeout_s)
    workdir = Path(tempfile.mkdtemp(prefix=f"tcm-{request.kernel}-{request.style}-{request.pipeline}-"))
    started = time.perf_counter()
    runner = _run_forked if mode == "fork" else _run_process
    try:
        exit_code, timed_out = runner(request, workdir, timeout_s)
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
                          duration_s=elapsed, detail={"log_tail": log[-LOG_TAIL_CHARS:], "isolation": mode})
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
