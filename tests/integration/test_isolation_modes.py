"""Worker isolation (cells in long-lived xdist workers), its fixed scheduler, and --cold-cache.

The crash, abort, exit and hang faults in worker mode are in tests/integration/faults/test_isolation.py;
here: what the controller makes of a dead worker's folder, the scheduler under random crashes,
a CUDA error that retires a worker, and empty caches per cell.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import zlib
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.plugin.state import cell_id_of
from harness.results import read_results
from harness.run.cell import CellRequest
from harness.run.isolation import run_inline, run_isolated, worker_mode
from harness.run.startup.warm_imports import warm_imports

REPO = Path(__file__).resolve().parents[2]
WORKER_KERNELS = Path(__file__).parent / "faults" / "worker_kernels.py"
BROKEN_CONTROL_KERNELS = Path(__file__).parent / "plugins" / "broken_control_kernels.py"
REQUEST = CellRequest("add", "raw", "eager", "cpu", worker="gw3")


def _worker_dir(tmp_path: Path, stage: str, log: str, cell: str = "add/raw/eager") -> Path:
    (tmp_path / worker_mode.CURRENT).write_text(json.dumps({"cell": cell, "state": "running", "started": 0, "timeout_s": 15}))
    (tmp_path / worker_mode.STAGE).write_text(stage)
    (tmp_path / worker_mode.FAULT_LOG).write_text(log)
    return tmp_path


def test_a_worker_killed_by_a_signal_is_a_crash_with_the_signal_stage_and_frame(tmp_path):
    log = ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
           '  File "/k/fault.py", line 50 in _segfault\n  File "/k/fault.py", line 40 in launch\n')
    result = worker_mode.crash_result(REQUEST, _worker_dir(tmp_path, "run", log), -11)
    assert (result.outcome, result.stage, result.error_type, result.worker) == ("crash", "run", "SIGSEGV", "gw3")
    assert "died of SIGSEGV in stage run" in result.error and 'line 50 in _segfault' in result.error
    assert result.detail["isolation"] == "worker" and "Segmentation fault" in result.detail["log_tail"]
    assert result.detail["started_at"] == 0  # when the cell started, from the worker's folder: the run's timeline


def test_a_crash_in_a_cell_the_folder_does_not_name_has_no_start_time(tmp_path):
    result = worker_mode.crash_result(REQUEST, _worker_dir(tmp_path, "run", "", cell="sin/raw/eager"), -11)
    assert result.outcome == "crash" and "started_at" not in result.detail and result.duration_s == 0.0


def test_without_an_exit_status_faulthandlers_line_names_the_signal(tmp_path):
    result = worker_mode.crash_result(REQUEST, _worker_dir(tmp_path, "compile", "Fatal Python error: Aborted\n"), None)
    assert (result.outcome, result.stage, result.error_type) == ("crash", "compile", "SIGABRT")


def test_a_silent_exit_is_a_crash_with_its_code(tmp_path):
    result = worker_mode.crash_result(REQUEST, _worker_dir(tmp_path, "run", ""), 3)
    assert (result.outcome, result.error_type) == ("crash", "ProcessExited")
    assert "exited with code 3 in stage run" in result.error


def test_faulthandlers_watchdog_is_a_timeout(tmp_path):
    log = "Timeout (0:00:15)!\nThread 0x1 (most recent call first):\n  File \"/k/fault.py\", line 58 in _sleep_forever\n"
    result = worker_mode.crash_result(REQUEST, _worker_dir(tmp_path, "run", log), 1)
    assert (result.outcome, result.stage, result.error_type) == ("timeout", "run", "Timeout")
    assert "no result after 15 s in stage run" in result.error


def test_a_worker_that_left_on_purpose_is_known(tmp_path):
    assert worker_mode.retired_after(tmp_path) is None
    (tmp_path / worker_mode.RETIRED).write_text(json.dumps({"after": "add/raw/eager", "reason": "CUDA error"}))
    assert worker_mode.retired_after(tmp_path) == "add/raw/eager"


def test_cell_ids_are_read_from_xdist_node_ids():
    assert cell_id_of("matrix/test_eager.py::test_cell[add/raw/eager]@add/eager") == "add/raw/eager"
    assert cell_id_of("matrix/test_eager.py::test_cell[add/raw/eager]") == "add/raw/eager"
    assert cell_id_of("tests/test_x.py::test_y") is None


def test_worker_mode_outside_xdist_is_refused_with_one_line():
    completed = subprocess.run([sys.executable, "-m", "pytest", "matrix/test_eager.py", "--matrix-isolation", "worker",
                                "--matrix-kernel", "add", "-p", "no:cacheprovider"],
                               cwd=REPO, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 4
    assert "the matrix runs its cells in pytest-xdist workers: add -n auto (or -n N)" in completed.stderr


STRESS_TESTS = """
import os, signal, zlib, pytest
CASES = [pytest.param(g, i, marks=pytest.mark.xdist_group(f"g{g}")) for g in range(12) for i in range(4)]

@pytest.mark.parametrize("g,i", CASES)
def test_s(g, i):
    if zlib.crc32(f"{g}-{i}".encode()) % 10 < 3:
        os.kill(os.getpid(), signal.SIGSEGV)
"""
STRESS_CONFTEST = """
import pytest
from harness.plugin.xdist_scheduler import restart_safe_loadgroup

@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return restart_safe_loadgroup(config, log)
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 3])
def test_the_scheduler_runs_every_item_exactly_once_while_workers_keep_dying(tmp_path, workers):
    """12 groups of 4 items, 19 of them segfault. xdist 3.8's own loadgroup reruns crashed items, hangs, or stops early."""
    (tmp_path / "test_stress.py").write_text(textwrap.dedent(STRESS_TESTS))
    (tmp_path / "conftest.py").write_text(textwrap.dedent(STRESS_CONFTEST))
    crashing = sum(zlib.crc32(f"{g}-{i}".encode()) % 10 < 3 for g in range(12) for i in range(4))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    completed = subprocess.run([sys.executable, "-m", "pytest", "test_stress.py", "-q", "-rA", "-n", str(workers),
                                "--dist", "loadgroup", "--max-worker-restart", "100", "-p", "no:cacheprovider",
                                "-p", "no:faulthandler", "-p", "no:benchmark"],
                               cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in completed.stdout.splitlines() if line.startswith(("PASSED", "FAILED"))]
    reported = [line.split(" - ")[0].split()[1] for line in lines]
    assert sorted(reported) == sorted(set(reported)) and len(reported) == 48, completed.stdout[-3000:]
    assert f"{crashing} failed, {48 - crashing} passed" in completed.stdout, completed.stdout[-3000:]


ORDER_TESTS = """
import os, signal, pytest
CASES = [pytest.param(g, i, marks=pytest.mark.xdist_group(f"g{g}")) for g in range(4) for i in range(3)]

@pytest.mark.parametrize("g,i", CASES)
def test_s(g, i):
    with open("order.log", "a") as log:
        log.write(f"{g}-{i}\\n")
    if (g, i) == (0, 1):
        os.kill(os.getpid(), signal.SIGSEGV)
"""


@pytest.mark.slow
def test_the_rest_of_a_group_whose_item_killed_its_worker_runs_next_not_last(tmp_path):
    """xdist 3.8 puts the rest of group 0 behind groups 1-3 (order 0-0 0-1 1-0 ... 3-2 0-2); here it runs next."""
    (tmp_path / "test_order.py").write_text(textwrap.dedent(ORDER_TESTS))
    (tmp_path / "conftest.py").write_text(textwrap.dedent(STRESS_CONFTEST))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    completed = subprocess.run([sys.executable, "-m", "pytest", "test_order.py", "-q", "-n", "1", "--dist", "loadgroup",
                                "--max-worker-restart", "5", "-p", "no:cacheprovider", "-p", "no:faulthandler"],
                               cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "1 failed, 11 passed" in completed.stdout, completed.stdout[-3000:]
    order = (tmp_path / "order.log").read_text().split()
    assert order == [f"{g}-{i}" for g in range(4) for i in range(3)], order


SIZES_TESTS = """
import pytest
CASES = [pytest.param(g, i, marks=pytest.mark.xdist_group(f"g{g}")) for g, size in enumerate((1, 2, 4)) for i in range(size)]

@pytest.mark.parametrize("g,i", CASES)
def test_s(g, i):
    with open("order.log", "a") as log:
        log.write(f"{g}-{i}\\n")
"""


def test_groups_go_out_in_collection_order_not_largest_first(tmp_path):
    """The plugin orders the matrix's groups longest first; xdist 3.8 would reorder them by item count."""
    (tmp_path / "test_sizes.py").write_text(textwrap.dedent(SIZES_TESTS))
    (tmp_path / "conftest.py").write_text(textwrap.dedent(STRESS_CONFTEST))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    completed = subprocess.run([sys.executable, "-m", "pytest", "test_sizes.py", "-q", "-n", "1", "--dist", "loadgroup",
                                "-p", "no:cacheprovider"], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=300)
    assert "7 passed" in completed.stdout, completed.stdout[-3000:]
    order = (tmp_path / "order.log").read_text().split()
    assert order == ["0-0", "1-0", "1-1", "2-0", "2-1", "2-2", "2-3"], order


@pytest.mark.slow
def test_a_cuda_error_retires_the_worker_after_its_cell_is_recorded(tmp_path):
    output = tmp_path / "results.jsonl"
    command = ["run", "--tier", "cpu", "--kernels-from", str(WORKER_KERNELS),
               "-k", "fault_cuda_text,after_cuda", "-s", "native,raw,custom_op", "-p", "eager", "-n", "1",
               "--isolation", "worker", "-o", str(output)]
    completed = harness_command(command, timeout=600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    cells = {cell.id: cell for cell in read_results(output).cells}
    assert len(cells) == 6  # each cell once: the retirement is not a result
    poisoned = cells["fault_cuda_text/raw/eager"]
    assert (poisoned.outcome, poisoned.stage) == ("fail", "run") and "CUDA error" in poisoned.error
    assert "CUDA error in fault_cuda_text/raw/eager" in poisoned.detail["worker_retired"]
    assert cells["fault_cuda_text/native/eager"].worker == "gw0"
    assert poisoned.worker == "gw0" and cells["fault_cuda_text/custom_op/eager"].worker != "gw0"  # a fresh worker
    assert all(cells[f"after_cuda/{style}/eager"].outcome == "pass" for style in ("native", "raw", "custom_op"))
    # custom_op poisoned the fresh worker too; the control that judges it ran in a process of its own, so it is a
    # plain fail, not `env` and not lost (on the H100 such cells had no result: the control died in that worker).
    judged = cells["fault_cuda_text/custom_op/eager"]
    assert (judged.outcome, judged.stage) == ("fail", "run") and "CUDA error" in judged.error


@pytest.mark.slow
@pytest.mark.parametrize("cold", [False, True])
def test_cold_cache_gives_the_cell_empty_caches_of_its_own(cold, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where run_isolated makes the cell's folder
    request = CellRequest("add", "custom_op", "compile_fullgraph", "cpu", cold_cache=cold)
    warm_imports()  # as the zygote does first (importing Inductor may set TORCHINDUCTOR_CACHE_DIR itself)
    before = {name: os.environ.get(name) for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    result = run_isolated(request, timeout_s=600, mode="process", keep_workdir=True)
    (workdir,) = tmp_path.glob("tcm-add-custom_op-compile_fullgraph-*")
    cold_inductor = workdir / "cold-cache" / "inductor"
    assert result.outcome == "pass", result
    assert cold_inductor.is_dir() == cold
    if cold:
        assert any(path.is_file() for path in cold_inductor.rglob("*")), "Inductor wrote nothing to the cell's own cache"
    assert {name: os.environ.get(name) for name in before} == before  # the parent's caches are untouched


def test_a_cell_run_inline_leaves_no_folder_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where run_inline makes the cell's folder
    result = run_inline(CellRequest("add", "native", "eager", "cpu"))
    assert result.outcome == "pass", result
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_control_the_selection_left_out_runs_forked_from_the_zygote_and_judges_the_style(tmp_path):
    """`-s raw` leaves the control out: the worker cannot run it after raw's failure, so it runs in a child of the
    run's zygote, as a new worker would (a new Python here cost about 6 CPU seconds a control), and still judges."""
    output = tmp_path / "results.jsonl"
    command = ["run", "--tier", "cpu", "--kernels-from", str(BROKEN_CONTROL_KERNELS),
               "-s", "raw", "-p", "export_nonstrict", "-n", "1", "--isolation", "worker", "-o", str(output)]
    completed = harness_command(command, timeout=600)
    (judged,) = read_results(output).cells
    assert judged.id == "broken_control/raw/export_nonstrict", completed.stdout[-3000:] + completed.stderr[-3000:]
    assert judged.outcome == "env" and judged.control["outcome"] == "fail", judged
    assert judged.control["error"] == "this control refuses export; it ran in a child forked from the run's zygote"


# faulthandler's dump at a time limit, as an xdist worker writes it: the newest thread first, each innermost frame first.
WATCHDOG_DUMP = ("Timeout (0:05:00)!\n"
                 "Thread 0x2 (most recent call first):\n"
                 '  File "/usr/lib/python3.12/threading.py", line 359 in wait\n'
                 '  File "/usr/lib/python3.12/threading.py", line 1010 in _bootstrap\n\n'
                 "Thread 0x1 (most recent call first):\n"
                 '  File "/site/triton/testing.py", line 150 in do_bench\n'
                 '  File "/site/triton/runtime/autotuner.py", line 160 in _bench\n'
                 + "".join(f'  File "/site/_pytest/x{i}.py", line {i} in frame{i}\n' for i in range(98))
                 + "  ...\n")  # faulthandler's own cut after 100 frames: the main thread's outermost frame is not shown


def test_a_timeout_names_where_the_cells_thread_was_and_keeps_its_innermost_frames(tmp_path):
    result = worker_mode.crash_result(REQUEST, _worker_dir(tmp_path, "run", WATCHDOG_DUMP), 1)
    assert result.outcome == "timeout"
    assert 'at File "/site/triton/testing.py", line 150 in do_bench;' in result.error
    kept = result.detail["log_tail"]
    assert kept.startswith("Timeout (0:05:00)!\nThread 0x1") and "in _bench" in kept and "88 outer frames" in kept
    assert "threading.py\", line 359 in wait" in kept  # the other threads follow
    assert "frame97" not in kept  # an outer frame past the twelve kept


def test_a_long_log_before_the_stacks_does_not_push_them_out():
    from harness.run.isolation.death import compact_stacks
    kept = compact_stacks("".join(f"a line the child printed {i}\n" for i in range(2000)) + WATCHDOG_DUMP)
    assert "Timeout (0:05:00)!" in kept and "in do_bench" in kept and "printed 1990" not in kept


def test_a_cell_process_another_thread_waits_on_is_ended_on_request():
    """What an interrupt during confirmation does (harness.run.confirm): the try's process, in a session of its own
    that the terminal's Ctrl-C does not reach, is killed instead of waited on until its time limit."""
    import threading
    import time

    from harness.run.isolation import end_waited_on_cells, modes

    request = CellRequest("fault_hang", "raw", "eager", "cpu", worker="confirm",
                          kernels_from=[str(Path(__file__).parent / "faults" / "fault_kernels.py")])
    finished: list = []
    waiting = threading.Thread(target=lambda: finished.append(run_isolated(request, timeout_s=300, mode="process")))
    started = time.monotonic()
    waiting.start()
    while not modes._waited_on and time.monotonic() - started < 60:
        time.sleep(0.05)
    end_waited_on_cells()
    waiting.join(timeout=60)
    assert finished and finished[0].outcome == "crash" and "SIGKILL" in finished[0].error, finished
    assert time.monotonic() - started < 120 and not modes._waited_on
