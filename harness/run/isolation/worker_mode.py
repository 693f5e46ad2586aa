"""Isolation mode `worker`: cells run inline in long-lived pytest-xdist workers, replaced after a fault.

No process is made per cell. What keeps a fault in its cell:
- a crash kills the worker; xdist replaces it and the controller records the cell as `crash` from
  what the worker left in its folder (the cell it was running, its stage, faulthandler's output,
  the exit status), see `crash_result`;
- a hang: faulthandler's own watchdog thread (it needs no GIL) dumps every thread's stack and ends
  the worker at the time limit; the controller records `timeout`;
- a CUDA error poisons the context for every later cell, so after recording that cell the worker
  leaves (`retire`) and xdist starts a fresh one;
- between cells the worker resets Dynamo, drops the operators the harness registered, restores os.environ,
  so the next cell can register its own, collects Python's cyclic garbage and fills the GPU memory the allocator
  holds free with NaN, so that an output no kernel wrote never reads an earlier cell's answer
  (harness.run.gpu_memory);
- torch's config modules are restored after each cell; a cell that changes other global state (the default
  dtype, grad mode, the working directory: harness.run.isolation.global_state) is recorded as it ran, and then the
  worker retires, so the next cell starts in a fresh worker.
Outcomes are checked cell by cell against process-per-cell by `python -m harness bench`.
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from harness.atomic import write_text_atomic
from harness.domain.artifact_store import ArtifactStore
from harness.results import WORKER_RETIRED, CellResult
from harness.run.cell import CellRequest, execute_cell, result_for
from harness.run.gpu_memory import fill_free_gpu_memory, freeze_what_is_held, frozen_yet
from harness.run.isolation import global_state
from harness.run.isolation.death import compact_stacks, death_evidence, stuck_frame
from harness.run.startup import run_fresh_python

CURRENT, STAGE, FAULT_LOG, RETIRED = "current.json", "stage", "fault.log", "retired.json"
CUDA_ERROR = re.compile(r"CUDA error|AcceleratorError|cudaError|illegal memory access|device-side assert")
FAULTHANDLER_SIGNALS = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
                        "Floating-point exception": "SIGFPE", "Illegal instruction": "SIGILL"}


class _Slot:
    """This worker's folder and fault log; set once per worker process by `configure`."""

    directory: Path | None = None
    log: IO[str] | None = None
    retire_reason: str | None = None
    artifacts: ArtifactStore | None = None  # the packages and saved programs this worker built, for its later cells
    cuda_context: threading.Thread | None = None  # making this worker's CUDA context while it collects (GPU tier)


_slot = _Slot()


def configure(directory: Path, cuda_context_ahead: bool = False) -> None:
    """Called in each xdist worker before its first cell: its folder, its store of built artifacts, and the log
    faulthandler will write to. With `cuda_context_ahead` (the GPU tier; the worker's GPU pin already set), the
    worker's CUDA context is made now, in a thread, while the worker collects and the controller hands it work."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in (CURRENT, STAGE, RETIRED):
        (directory / name).unlink(missing_ok=True)
    _slot.directory = directory
    _slot.artifacts = ArtifactStore(directory / "artifacts")  # empty: a replacement worker builds what it loads
    _slot.log = open(directory / FAULT_LOG, "a", buffering=1)  # O_APPEND: writes follow a truncation
    if cuda_context_ahead:
        _slot.cuda_context = threading.Thread(target=_make_cuda_context, name="tcm-cuda-context", daemon=True)
        _slot.cuda_context.start()


def _make_cuda_context() -> None:
    """Why ahead: the driver makes contexts one at a time, and beside busy workers and the loaders forked ahead a
    new worker's first cell waited seconds for its own (4.6 s median, up to 13 s, in the GPU default:
    docs/maintainers.md, "Isolation"); a worker replaced after a CUDA error spends about as long collecting first.
    Every cell then starts with the context made, the first one too, as every later cell always did."""
    try:
        import torch

        torch.cuda.init()
        torch.cuda.synchronize()  # the runtime makes the primary context here
    except Exception:  # noqa: BLE001  (the first cell meets the error itself, with its evidence)
        pass


def _wait_for_cuda_context(timeout_s: float, log: IO[str]) -> None:
    """Wait for the context thread, under the cell's time limit: a context that never comes is the cell's timeout."""
    if _slot.cuda_context is None:
        return
    faulthandler.dump_traceback_later(timeout_s, exit=True, file=log)
    _slot.cuda_context.join()
    faulthandler.cancel_dump_traceback_later()
    _slot.cuda_context = None


def _freeze_once() -> None:
    """Before the first cell: what the worker holds by then (torch, the harness, the collected items) is moved out
    of the collector's sight for good, so that the collection before each cell (harness.run.gpu_memory) walks only
    what cells made since (its cost: docs/maintainers.md, "Isolation")."""
    if not frozen_yet():
        freeze_what_is_held()


def run_in_worker(request: CellRequest, timeout_s: float) -> CellResult:
    directory, log = _slot.directory, _slot.log
    if directory is None or log is None:
        raise RuntimeError("isolation mode 'worker' runs cells in pytest-xdist workers only (pytest -n N)")
    os.ftruncate(log.fileno(), 0)  # the log holds this cell's fault output only
    faulthandler.enable(log, all_threads=True)  # again: pytest's own faulthandler plugin took it back at configure
    started = time.time()
    write_text_atomic(directory / CURRENT, json.dumps({"cell": request.id, "state": "running", "started": started,
                                            "timeout_s": timeout_s}), durable=False)
    (directory / STAGE).write_text("build")
    _wait_for_cuda_context(timeout_s, log)  # the first cell only: every cell starts with the context made
    _freeze_once()
    environ = dict(os.environ)
    _reset_between_cells()
    fill_failure = _fill_free_memory()
    configs = global_state.save_configs()
    state_before = global_state.snapshot()
    faulthandler.dump_traceback_later(timeout_s, exit=True, file=log)
    workdir = Path(tempfile.mkdtemp(prefix="cell-", dir=directory))  # inside the run's folder: gone with it, even after a crash
    try:
        result = execute_cell(request, workdir, run_fresh_python, stage_marker=_stage_marker(directory / STAGE),
                              artifacts=_slot.artifacts)
    finally:
        faulthandler.cancel_dump_traceback_later()
        os.environ.clear()
        os.environ.update(environ)
        global_state.restore_configs(configs)
        shutil.rmtree(workdir, ignore_errors=True)
    result.detail["isolation"] = "worker"
    result.detail["worker_pid"] = os.getpid()
    result.detail["started_at"] = round(started, 3)  # epoch seconds: a run's timeline, worker by worker
    if fill_failure:
        result.detail["free_memory_fill"] = fill_failure
    poisoned = _cuda_poisoned(result) or _state_changed(request, state_before)
    if poisoned:
        _slot.retire_reason = poisoned
        result.detail[WORKER_RETIRED] = poisoned
    write_text_atomic(directory / CURRENT, json.dumps({"cell": request.id, "state": "done"}), durable=False)
    return result


def _stage_marker(path: Path) -> Any:
    def mark(stage: str) -> None:
        path.write_text(stage)

    return mark


def _reset_between_cells() -> None:
    """Forget what an earlier cell left that would change this one: Dynamo's caches, the harness's operators, and
    Triton's interpreter's rewritten kernels (after a launch, Dynamo tracing that kernel's launch skipped the
    rewrite and stopped at another graph break: the error line depended on the cells before,
    docs/maintainers.md, "Order independence")."""
    if "torch" not in sys.modules:
        return
    if "torch._dynamo" in sys.modules:
        import torch._dynamo

        torch._dynamo.reset()
    custom_ops = sys.modules.get("torch._library.custom_ops")
    libraries = getattr(custom_ops, "OPDEF_TO_LIB", {})  # custom_op's and triton_op's registrations, by qualified name
    for name in [name for name in libraries if name.startswith("tcm_")]:
        libraries.pop(name)._destroy()
    interpreter = sys.modules.get("triton.runtime.interpreter")
    rewritten = getattr(getattr(interpreter, "InterpretedFunction", None), "rewritten_fn", None)
    if isinstance(rewritten, dict):  # the interpreter's rewrite of each kernel launched so far: a new process has none
        rewritten.clear()


def _fill_free_memory() -> str | None:
    """The poison in the GPU memory earlier cells freed (harness.run.gpu_memory); why not, where it could not be done."""
    try:
        fill_free_gpu_memory()
    except Exception as exc:  # the cell still runs; its detail says its outputs may read an earlier cell's memory
        return f"free GPU memory not filled: {type(exc).__name__}: {exc}"
    return None


def _state_changed(request: CellRequest, before: dict[str, Any]) -> str | None:
    """Why this worker's global state can no longer be trusted after the cell, if it changed."""
    changed = global_state.changes(before, global_state.snapshot())
    return f"global state changed in {request.id}: {'; '.join(changed)}" if changed else None


def _cuda_poisoned(result: CellResult) -> str | None:
    """Why this worker's CUDA context can no longer be trusted, if it cannot."""
    text = f"{result.error_type or ''} {result.error or ''}"
    if CUDA_ERROR.search(text):
        return f"CUDA error in {result.id}: {result.error_type}"
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        try:
            torch.cuda.synchronize()
        except Exception as exc:  # the context is gone: every later cell here would fail
            return f"CUDA context unusable after {result.id}: {type(exc).__name__}"
    return None


def retire_if_poisoned(after: str | None) -> None:
    """After the reports of the test `after` (a cell id) went to the controller: leave, so that xdist starts a clean worker."""
    if _slot.retire_reason is None or _slot.directory is None:
        return
    write_text_atomic(_slot.directory / RETIRED, json.dumps({"after": after, "reason": _slot.retire_reason}))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# ---- the controller's side: what a dead worker left behind ----

def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def retired_after(directory: Path) -> str | None:
    """The cell after which the worker left on purpose (a CUDA error), if it did."""
    return _read_json(directory / RETIRED).get("after")


def _signal_of(exit_code: int | None, log: str) -> str | None:
    if exit_code is not None and exit_code < 0:
        return signal.Signals(-exit_code).name
    for text, name in FAULTHANDLER_SIGNALS.items():
        if f"Fatal Python error: {text}" in log:
            return name
    return None


def crash_result(request: CellRequest, directory: Path, exit_code: int | None) -> CellResult:
    """The cell a worker died in: `timeout` if faulthandler's watchdog ended it, else `crash` with the signal."""
    current = _read_json(directory / CURRENT)
    started = current.get("started") if current.get("cell") == request.id else None
    elapsed = round(time.time() - started, 3) if isinstance(started, (int, float)) else 0.0
    try:
        stage = (directory / STAGE).read_text().strip() or "build"
    except OSError:
        stage = "build"
    try:
        log = (directory / FAULT_LOG).read_text(errors="replace")
    except OSError:
        log = ""
    detail: dict[str, Any] = {"log_tail": compact_stacks(log), "isolation": "worker", "worker_exit_code": exit_code}
    if isinstance(started, (int, float)):  # as a finished cell's: the run's timeline
        detail["started_at"] = round(started, 3)
    if re.search(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!", log, re.MULTILINE):
        limit = current.get("timeout_s")
        limit_text = f"{limit:g} s" if isinstance(limit, (int, float)) else "the time limit"
        where = stuck_frame(log)
        at = f", at {where}" if where else ""
        return result_for(request, "timeout", stage=stage, error_type="Timeout",
                          error=f"no result after {limit_text} in stage {stage}{at}; the worker was ended (stacks in log_tail)",
                          duration_s=elapsed, detail=detail)
    kind, message = death_evidence("the worker", _signal_of(exit_code, log), exit_code, stage, log)
    return result_for(request, "crash", stage=stage, error_type=kind, error=message, duration_s=elapsed, detail=detail)
