"""Fault injection: a faulty cell gets the right outcome and stage, and no other cell's outcome changes.

The faults run through the real engine (CLI -> pytest -> isolation -> cell) on the CPU tier,
in one worker, before the witnesses, for each isolation mechanism. In `worker` mode (the default) a cell runs
in the xdist worker itself: a crash, an exit or a hang ends that worker and a new one takes over, and a cell
that corrupts its process and then raises (fault_dirty, fault_dirty_torch) is recorded, then its worker retires.
The clean run (the witnesses alone) is made once, in worker mode: each mode's faulty run is held to it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.results import read_results

FAULTS = Path(__file__).with_name("fault_kernels.py")
REPO = Path(__file__).resolve().parents[3]
WITNESSES = ["add", "after_add", "after_sin"]
FAULT_KERNELS = ["fault_segfault", "fault_abort", "fault_hang", "fault_exit", "fault_dirty", "fault_dirty_torch"]
# The faulty runs' per-cell limit (what fault_hang waits for). A process-mode cell's limit includes its new Python's
# import of torch: on two cores at load 7-9 a native control took over 15 s there and was recorded `timeout`.
TIMEOUT_S = {"worker": 15, "process": 45}


def run_matrix(tmp_path: Path, name: str, kernels: list[str], isolation: str, timeout: float = 60) -> dict[str, object]:
    output = tmp_path / f"{name}.jsonl"
    command = [sys.executable, "-m", "harness", "run", "--tier", "cpu", "--kernels-from", str(FAULTS),
               "-s", "native,raw,custom_op", "-p", "eager", "-n", "1", "--isolation", isolation,
               "--timeout", str(timeout), "-o", str(output)]
    for kernel in kernels:
        command += ["-k", kernel]
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return {cell.id: cell for cell in read_results(output).cells}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The witnesses alone, in worker mode: a process of its own per cell (process mode) is no cleaner."""
    return run_matrix(tmp_path_factory.mktemp("clean"), "clean", WITNESSES, "worker")


@pytest.fixture(scope="module", params=["worker", "process"])
def runs(request, clean, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp(request.param)
    faulty = run_matrix(tmp_path, "faulty", WITNESSES + FAULT_KERNELS, request.param, timeout=TIMEOUT_S[request.param])
    return clean, faulty


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
    message_part = message_part.format(timeout=TIMEOUT_S[request.node.callspec.params["runs"]])
    for style in ("raw", "custom_op"):
        cell = faulty[f"{kernel}/{style}/eager"]
        assert (cell.outcome, cell.stage, cell.error_type) == (outcome, stage, error_type), cell
        assert message_part in cell.error
    assert faulty[f"{kernel}/native/eager"].outcome == "pass"  # the control does not launch the fault


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
        f"spec = dict(tier='cpu', kernels_from=[{str(FAULTS)!r}])\n"
        "print(run_inline(CellRequest('fault_dirty', 'raw', 'eager', **spec)).outcome)\n"
        "print(run_inline(CellRequest('after_add', 'native', 'eager', **spec)).outcome)\n"
        "print(run_inline(CellRequest('after_add', 'raw', 'eager', **spec)).outcome)\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300,
                               env={**__import__("os").environ, "TRITON_INTERPRET": "1"})
    faulty, *witnesses = completed.stdout.split()
    assert faulty == "fail" and len(witnesses) == 2, completed.stderr[-2000:]
    assert "pass" not in witnesses  # isolated, both pass (test_every_other_cell_is_as_in_a_clean_run)
