"""pytest-xdist hooks of the matrix: GPU pinning of workers, and the controller's side of `--matrix-isolation worker`.

Loaded with harness.plugin.pytest_plugin. Every hook is inert unless xdist runs the matrix.
- Pinning (every isolation mode): on a machine with several GPUs, the controller gives each new worker
  one GPU (harness.run.gpus) and the worker sets CUDA_VISIBLE_DEVICES to it before CUDA starts.
- Worker mode: each worker gets a folder under a run folder the controller made; when a worker dies,
  xdist calls `pytest_handlecrashitem` and the controller turns what the worker left there into the
  cell's `crash` or `timeout` record, attached to the report like any cell's result. The run goes on
  with a new worker; a fixed loadgroup scheduler never runs the crashed cell again.
"""

from __future__ import annotations

import gc
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from harness.plugin.state import (
    DURATIONS,
    GPU,
    LOADER,
    RESULT_PROPERTY,
    RESULTS_FILE,
    REUSED,
    TIER,
    WORKER_ROOT,
    cell_id_of,
    loader_dir,
    matrix_state,
    stop_loader,
)
from harness.plugin.xdist_scheduler import dead_worker_exit_code, restart_safe_loadgroup
from harness.run.caches import run_caches, start_run_caches
from harness.run.cell import CellRequest
from harness.run.environment import query_gpus, resolve_tier, share_cores
from harness.run.gpus import GpuPins, visible_gpus
from harness.run.isolation import worker_mode
from harness.run.options import DEFAULT_ISOLATION
from harness.run.run_end import RunEnd
from harness.run.run_folders import mark_owner, remove_dead_runs_folders
from harness.run.startup import STARTED_VARIABLE, WORKER_STAND_IN, ZygoteUnavailable, ensure_started
from harness.run.verdict import evidence_line, mark_env
from harness.vocab import CONTROL_STYLE, split_cell_id

ZYGOTE_PYTHON = WORKER_STAND_IN  # the stand-in for a worker's Python
MAX_WORKER_RESTARTS = "100000"  # worker mode replaces a worker after every crash, timeout or CUDA error
_pins_key = pytest.StashKey[GpuPins]()
_root_key = pytest.StashKey[Path]()
_run_caches_key = pytest.StashKey[Path]()
_tier_key = pytest.StashKey[str]()
_run_end_key = pytest.StashKey[RunEnd]()


def _run_tier(config: pytest.Config) -> str:
    """The run's tier, resolved once on the controller ("auto" asks nvidia-smi) for the zygote and every worker."""
    if _tier_key not in config.stash:
        config.stash[_tier_key] = resolve_tier(config.option.matrix_tier)
    return config.stash[_tier_key]


def _isolation(config: pytest.Config) -> str:
    return getattr(config.option, "matrix_isolation", None) or DEFAULT_ISOLATION


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: pin it, and give worker mode its folder, before any cell
        if workerinput.get(GPU) is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = workerinput[GPU]
        if _isolation(config) == "worker" and workerinput.get(WORKER_ROOT):
            worker_mode.configure(Path(workerinput[WORKER_ROOT]) / workerinput["workerid"],
                                  cuda_context_ahead=workerinput.get(TIER) == "gpu")
        return
    os.environ.pop(STARTED_VARIABLE, None)  # this run's workers say how they started; none inherits it from another run
    if config.getvalue("collectonly") or not runs_matrix(config):
        return
    remove_dead_runs_folders()  # what runs killed with their zygotes left in the temporary folder
    # before the zygote or any worker starts: they inherit it; a zygote started ahead made the run's folder already
    ahead = getattr(config.option, "matrix_zygote_ahead", None)
    config.stash[_run_caches_key] = run_caches() if ahead else start_run_caches()
    asked = any(str(arg).startswith("--matrix-isolation") for arg in config.invocation_params.args)
    if _isolation(config) == "worker" and not getattr(config.option, "numprocesses", None) and not asked:
        # plain `pytest matrix` without -n: worker isolation needs xdist, so each cell gets a new Python instead
        config.option.matrix_isolation = "process"
        print("triton-compat-matrix: no -n given, so each cell runs in a new Python (--matrix-isolation process); "
              "add -n auto for the faster default", file=sys.stderr)
    # Before any worker starts: a new Python reads it as it loads torch; a process the zygote forks sizes torch's
    # threads from it (harness.run.startup.zygote_children.take_environment), the zygote may have started before.
    share_cores(_worker_count(config))
    # How workers start (recorded in the header): forked from the run's zygote in worker isolation, which never
    # imported a plug-in nor touched CUDA; xdist's own new Pythons in process isolation, where they only wait.
    in_workers = _isolation(config) == "worker" and getattr(config.option, "tx", None)
    config.option.matrix_worker_start = "zygote" if in_workers else "spawn"
    if config.option.matrix_worker_start == "zygote":
        _start_workers_from_zygote(config)
    if _isolation(config) != "worker":
        return
    every_cell_reused = config.option.matrix_reuse and not matrix_state(config).planned  # no worker is needed
    if not getattr(config.option, "numprocesses", None) and not every_cell_reused:
        raise pytest.UsageError("the matrix runs its cells in pytest-xdist workers: add -n auto (or -n N), "
                                "or ask for --matrix-isolation process")
    if getattr(config.option, "maxworkerrestart", None) is None:
        config.option.maxworkerrestart = MAX_WORKER_RESTARTS
    config.stash[_root_key] = Path(tempfile.mkdtemp(prefix="tcm-workers-"))
    mark_owner(config.stash[_root_key])


def runs_matrix(config: pytest.Config) -> bool:
    """Whether this pytest run asks the matrix suites (matrix/), not only the harness's own tests."""
    matrix = (Path(__file__).resolve().parents[2] / "matrix").resolve()
    for argument in config.args or []:
        path = Path(str(argument).split("::")[0])
        path = (path if path.is_absolute() else Path(config.invocation_params.dir) / path).resolve()
        if path == matrix or matrix in path.parents or path in matrix.parents:
            return True
    return False


def _worker_count(config: pytest.Config) -> int:
    """The xdist workers this run starts: xdist has turned `-n N` into N `popen` specs by now."""
    if getattr(config.option, "dist", "no") == "no":
        return 0
    return len(getattr(config.option, "tx", None) or [])


def _start_workers_from_zygote(config: pytest.Config) -> None:
    """--matrix-worker-start zygote: every xdist worker (a replacement included) is forked from the run's zygote.

    xdist starts a worker as `PYTHON -u -c CODE`; PYTHON becomes harness.run.startup.zygote_python, which has the zygote
    fork it. The zygote starts now, so that its warm-up overlaps the controller's collection, unless `harness run`
    started it before it loaded the kernels (harness.run.startup.zygote_ahead): then it is found alive and adopted."""
    directory = loader_dir(config)
    try:
        ensure_started(directory, os.getpid(), _run_tier(config))
    except ZygoteUnavailable as exc:  # the run goes on with xdist's own workers, and its header says so
        print(f"worker zygote: {exc}; starting workers as new Pythons", file=sys.stderr)
        config.option.matrix_worker_start = "spawn"
        return
    stand_in = " ".join(shlex.quote(part) for part in (sys.executable, "-I", "-S", ZYGOTE_PYTHON, str(directory)))
    config.option.tx = [f"popen//python={stand_in}" if spec == "popen" else spec for spec in config.option.tx]


def _run_folders(config: pytest.Config) -> list[Path]:
    """The folders this controller made for the run: its workers' (worker isolation) and its compile caches'."""
    return [config.stash[key] for key in (_root_key, _run_caches_key) if key in config.stash]


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The last cell has ended, and xdist has ended its workers (its own hook comes before this one): the zygote's
    stop and the removal of the run's folders start now, beside pytest's summary (harness.run.run_end), and
    `pytest_unconfigure` waits for them first."""
    config = session.config
    if hasattr(config, "workerinput") or not runs_matrix(config):
        return
    config.stash[_run_end_key] = RunEnd(lambda: stop_loader(config), _run_folders(config))


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if _run_end_key in config.stash:
        config.stash[_run_end_key].finish()
        del config.stash[_run_end_key]
    for folder in _run_folders(config):  # a run that never reached pytest_sessionfinish
        shutil.rmtree(folder, ignore_errors=True)
    if runs_matrix(config):
        # pytest (>= 8.4) collects garbage five times after this hook to report unraisable exceptions: with torch
        # imported, about 2 CPU seconds for a one-cell run's controller and workers (docs/maintainers.md,
        # "Isolation"). Nothing after the last cell is evidence: what the process holds is frozen out of sight first.
        gc.freeze()


def _pins(config: pytest.Config) -> GpuPins:
    """Made once on the controller: nvidia-smi counts the GPUs, CUDA is never touched here."""
    if _pins_key not in config.stash:
        visible: list[str] = []
        if getattr(config.option, "matrix_tier", "auto") != "cpu":
            visible = visible_gpus(os.environ, len(query_gpus()))
        config.stash[_pins_key] = GpuPins(visible if len(visible) > 1 else [])
    return config.stash[_pins_key]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Controller, before a worker starts (a replacement included): its GPU, its worker-mode folder, the run's loader zygote."""
    config = node.config
    node.workerinput[GPU] = _pins(config).assign(node.gateway.id)
    node.workerinput[LOADER] = [str(loader_dir(config)), os.getpid()]
    node.workerinput[TIER] = _run_tier(config)
    node.workerinput[RESULTS_FILE] = config.option.matrix_resume or config.option.matrix_results  # its controls
    # The weights its collection orders the cells by, read here once (harness.plugin.state.run_durations).
    if runs_matrix(config):
        node.workerinput[DURATIONS] = matrix_state(config).durations
        node.workerinput[REUSED] = sorted(matrix_state(config).reused)  # not to be run: the controller copied them
    if _root_key in config.stash:
        node.workerinput[WORKER_ROOT] = str(config.stash[_root_key])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _pins(node.config).release(node.gateway.id)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if _root_key in config.stash and config.getvalue("dist") == "loadgroup":
        return restart_safe_loadgroup(config, log)
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: Any, sched: Any) -> None:
    config = getattr(report.node, "config", None)
    if config is None or _root_key not in config.stash:
        return
    cell = cell_id_of(crashitem)
    if cell is None:
        return
    worker = report.node.gateway.id
    directory = config.stash[_root_key] / worker
    if worker_mode.retired_after(directory) == cell:  # it left on purpose after this cell's results went out
        report.outcome = "retired"
        report.longrepr = f"worker {worker} left after {cell} to drop a poisoned CUDA context"
        return
    state = matrix_state(config)
    kernel, style, pipeline = split_cell_id(cell)
    request = CellRequest(kernel, style, pipeline, state.tier, kernels_from=state.kernels_from, worker=worker)
    result = worker_mode.crash_result(request, directory, dead_worker_exit_code(report.node))
    gpu = _pins(config).given.get(worker)
    if gpu is not None:
        result.detail["gpu"] = gpu
    control = state.controls.get((kernel, pipeline))
    if style != CONTROL_STYLE and control is not None:
        mark_env(result, control)
    report.when = "call"  # recorded like any cell's report (harness.plugin.pytest_plugin.ResultsRecorder)
    report.user_properties.append((RESULT_PROPERTY, result.to_record()))
    report.longrepr = f"{result.id}: {evidence_line(result)}"
    expected = state.baseline.get(result.id) if state.baseline is not None else None
    if expected == "pass":  # pytest outcomes as harness.plugin.pytest_plugin.assert_outcome gives them: a regression
        report.longrepr = f"{result.id}: regressed, the baseline expects pass: {evidence_line(result)}"
    elif result.outcome == "env":
        report.outcome = "skipped"
        report.longrepr = (report.location[0], 0, f"Skipped: env: {result.reason}")
    else:  # a recorded crash or timeout is a finished measurement
        report.outcome = "passed"
        report.longrepr = None


def pytest_report_teststatus(report: Any) -> tuple[str, str, str] | None:
    if getattr(report, "outcome", None) == "retired":
        return "retired", "R", "RETIRED"
    return None


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    """In a worker-mode worker, after the cell's reports went out: leave if its CUDA context is poisoned."""
    worker_mode.retire_if_poisoned(cell_id_of(nodeid))  # the test's cell: its control may have run after it
