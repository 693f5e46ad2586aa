"""Fault injection: a faulty cell gets the right outcome and stage, and no other cell's outcome changes.

The faults run through the real engine (CLI -> pytest -> isolation -> cell) on the machine's tier, in one worker,
before the witnesses, for each isolation mechanism. In `worker` mode (the default) a cell runs in the xdist worker
itself: a crash, an exit or a hang ends that worker and a new one takes over, and a cell that corrupts its process
and then raises (fault_dirty, fault_dirty_torch) is recorded, then its worker retires. Worker mode's faulty run
and the clean run (the witnesses alone, in worker mode) are the fault table's (fault_runs.py: one run per
mechanism); process mode's faulty run is this module's own, held to the same clean run. Process mode asks `raw`
beside the control: a cell in a process of its own dies the same way whichever style launched, and each of its cells
pays a process (forked by the suite's zygote maker where it can: tests/zygote_maker.py; worker mode asks `custom_op`
too).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
from fault_runs import FAULTS_MODULE, LAUNCHING_STYLES, REPO, TIMEOUT_S, WITNESSES, FaultRun, cells, run_matrix

from harness.results import CellResult

FAULT_KERNELS = ["fault_segfault", "fault_abort", "fault_hang", "fault_exit", "fault_dirty", "fault_dirty_torch"]
# Process mode's per-cell limit (what fault_hang waits for) includes its process's start: forked by the suite's zygote
# maker it is about a second, but where the maker refuses (tests/zygote_maker.py) a new Python imports torch, and on
# two cores at load 7-9 a native control then took over 15 s and was recorded `timeout`. fault_hang waits for it.
PROCESS_TIMEOUT_S = 25
STYLES = {"worker": LAUNCHING_STYLES["eager"], "process": ["raw"]}  # the styles that launch, per mode
TIMEOUT = {"worker": TIMEOUT_S["eager"], "process": PROCESS_TIMEOUT_S}


def run_in_process_mode(folder: Path) -> dict[str, CellResult]:
    run_matrix(folder, FaultRun("faulty", WITNESSES + FAULT_KERNELS, ["native", *STYLES["process"]], ["eager"],
                                PROCESS_TIMEOUT_S, isolation="process"), limit_s=900)
    return cells(folder, "faulty")


def asks_process_mode(items: list[pytest.Item], module: object) -> bool:
    """Whether any selected test of `module` reads process mode's run (the `runs` fixture's "process" half)."""
    return any(getattr(item, "module", None) is module
               and getattr(getattr(item, "callspec", None), "params", {}).get("runs") == "process" for item in items)


@pytest.fixture(scope="module")
def process_mode_run(request, tmp_path_factory) -> Iterator[Future | None]:
    """Process mode's faulty run, started as the module starts, beside worker mode's runs: its fault_hang waits for
    its cell limit with no CPU behind it, as theirs do. None when no selected test reads it (`-k worker`)."""
    if not asks_process_mode(request.session.items, request.module):
        yield None
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(run_in_process_mode, tmp_path_factory.mktemp("process"))


@pytest.fixture(scope="module", params=["worker", "process"])
def runs(request, process_mode_run):
    """(the clean run's eager cells, the mode's faulty run)."""
    folder = request.getfixturevalue("fault_runs" if request.param == "worker" else "clean_fault_run")
    clean = {cell_id: cell for cell_id, cell in cells(folder, "clean").items() if cell.pipeline == "eager"}
    if request.param == "worker":
        return clean, cells(folder, "eager")
    asked = {"native", *STYLES["process"]}
    assert process_mode_run is not None, "process mode's run was not started though a test reads it"
    return {cell_id: cell for cell_id, cell in clean.items() if cell.style in asked}, process_mode_run.result()


@pytest.mark.slow
@pytest.mark.parametrize(
    "kernel, outcome, stage, error_type, message_part",
    [
        ("fault_segfault", "crash", "run", "SIGSEGV", "died of SIGSEGV in stage run"),
        ("fault_abort", "crash", "run", "SIGABRT", "died of SIGABRT in stage run"),
        ("fault_hang", "timeout", "run", "Timeout", "no result after {timeout} s in stage run"),
        ("fault_exit", "crash", "run", "ProcessExited", "exited with code 3 in stage run"),
        ("fault_dirty", "fail", "run", "RuntimeError", "raised after corrupting the checker"),
        ("fault_dirty_torch", "fail", "run", "RuntimeError", "raised after setting the default device to meta"),
    ],
)
def test_faulty_cell_gets_its_outcome_and_stage(runs, request, kernel, outcome, stage, error_type, message_part):
    _, faulty = runs
    mode = request.node.callspec.params["runs"]
    message_part = message_part.format(timeout=TIMEOUT[mode])
    for style in STYLES[mode]:
        cell = faulty[f"{kernel}/{style}/eager"]
        assert (cell.outcome, cell.stage, cell.error_type) == (outcome, stage, error_type), cell
        assert message_part in cell.error
    assert faulty[f"{kernel}/native/eager"].outcome == "pass"  # the control does not launch the fault


@pytest.mark.slow
def test_a_hung_cell_in_a_worker_names_the_frame_it_hung_in(runs, request):
    if request.node.callspec.params["runs"] != "worker":
        pytest.skip("a cell's own process is killed without a stack dump")
    _, faulty = runs
    for style in STYLES["worker"]:
        cell = faulty[f"fault_hang/{style}/eager"]
        assert "fault_kernels.py\", line 58 in _sleep_forever" in cell.error, cell.error
        assert cell.detail["log_tail"].startswith("Timeout ("), cell.detail["log_tail"][:500]


@pytest.mark.slow
def test_every_other_cell_is_as_in_a_clean_run(runs):
    clean, faulty = runs
    assert set(clean) < set(faulty)
    changed = {cell_id: (clean[cell_id].outcome, faulty[cell_id].outcome)
               for cell_id in clean if clean[cell_id].outcome != faulty[cell_id].outcome}
    assert changed == {}
    assert all(cell.outcome == "pass" for cell in clean.values())


@pytest.mark.slow
def test_the_dirty_fault_would_poison_a_shared_process():
    """Without isolation the corruption reaches the next cell: proof that the witnesses test something."""
    script = (
        "from harness.run.cell import CellRequest\n"
        "from harness.run.isolation import run_inline\n"
        f"spec = dict(tier='cpu', kernels_from=[{str(FAULTS_MODULE)!r}])\n"
        "print(run_inline(CellRequest('fault_dirty', 'raw', 'eager', **spec)).outcome)\n"
        "print(run_inline(CellRequest('after_add', 'native', 'eager', **spec)).outcome)\n"
        "print(run_inline(CellRequest('after_add', 'raw', 'eager', **spec)).outcome)\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300,
                               env={**os.environ, "TRITON_INTERPRET": "1"})
    faulty, *witnesses = completed.stdout.split()
    assert faulty == "fail" and len(witnesses) == 2, completed.stderr[-2000:]
    assert "pass" not in witnesses  # isolated, both pass (test_every_other_cell_is_as_in_a_clean_run)


def test_process_modes_run_starts_only_where_a_selected_test_reads_it():
    here, other = object(), object()

    def item(module: object, runs: str) -> SimpleNamespace:
        return SimpleNamespace(module=module, callspec=SimpleNamespace(params={"runs": runs}))

    assert asks_process_mode([item(here, "worker"), item(here, "process")], here)
    assert not asks_process_mode([item(here, "worker"), item(other, "process")], here)  # `-k worker`
    assert not asks_process_mode([SimpleNamespace(module=here)], here)  # a test that reads no run
