"""Confirmation before alarm, through the real CLI on this machine's tier (issue #33).

A baseline is written from a clean run of two plug-in kernels; then the same cells run with faults: a fault
that a new process does not see again (`transient_add`: exit 0, the cell listed as flaky, every try's evidence
kept), and a result that really changed (`changed_add`: exit 1, the cell named as a confirmed regression after
three new runs). Changed cells are confirmed at once on the run's workers (their tries' processes overlap), a
run with more changed cells than --confirm-sample records and lists the rest as unconfirmed, and Ctrl-C during
confirmation ends the tries, which run in sessions of their own that the terminal's signal does not reach.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.report.markdown.aggregate import final_cells
from harness.results import read_results
from harness.run.environment import resolve_tier

PLUGIN = Path(__file__).with_name("changing_kernels.py")
REPO = Path(__file__).resolve().parents[3]
TRANSIENT, CHANGED = "transient_add/raw/eager", "changed_add/raw/eager"

pytestmark = pytest.mark.slow


def _run(folder: Path, mode: str, name: str, kernels: str, *extra: str,
         sleep_s: float = 0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TCM_CHANGE_MODE=mode, TCM_CHANGE_DIR=str(folder), TCM_CHANGE_SLEEP_S=str(sleep_s))
    command = ["run", "--kernels-from", str(PLUGIN), "-k", kernels,
               "-s", "native,raw", "-p", "eager", "--tier", resolve_tier("auto"), "-n", "1",
               "-o", str(folder / f"{name}.jsonl"), *extra]
    return harness_command(command, env=env, timeout=600)


@pytest.fixture(scope="module")
def baseline_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("confirm")
    clean = _run(folder, "ok", "clean", "transient_add,changed_add,also_changed_add", "--baseline-dir", "none")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    written = harness_command(["baseline", str(folder / "clean.jsonl"), "--dir", str(folder / "expected")])
    assert written.returncode == 0, written.stderr
    cells = final_cells(read_results(folder / "clean.jsonl"))
    assert cells[TRANSIENT].outcome == cells[CHANGED].outcome == "pass"
    return folder / "expected"


def test_a_transient_fault_is_flaky_and_does_not_fail_the_run(baseline_dir: Path, tmp_path: Path) -> None:
    """As a kernel library's CI asks it: the expected outcomes are its committed results file (--baseline-results)."""
    clean = baseline_dir.parent / "clean.jsonl"
    run = _run(tmp_path, "faults", "transient", "transient_add", "--baseline-results", str(clean))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 regressions" in run.stdout and "1 flaky" in run.stdout
    cell = final_cells(read_results(tmp_path / "transient.jsonl"))[TRANSIENT]
    assert cell.outcome == "flaky"
    confirmation = cell.detail["confirmation"]
    assert confirmation["verdict"] == "flaky" and confirmation["baseline"] == "pass"
    tries = confirmation["tries"]
    assert [attempt["outcome"] for attempt in tries] == ["fail", "pass"]  # stops at the first try that disagrees
    assert "transient by design" in tries[0]["error"] and tries[0]["traceback"]
    assert tries[1]["isolation"] == "process"


def test_a_changed_result_is_confirmed_and_fails_the_run(baseline_dir: Path, tmp_path: Path) -> None:
    run = _run(tmp_path, "faults", "both", "transient_add,changed_add", "--baseline-dir", str(baseline_dir))
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"regressions: {CHANGED}: pass -> wrong (confirmed)" in run.stdout
    assert "WRONG CONSISTENTLY in 3 new process(es)" in run.stdout
    assert f"flaky: {TRANSIENT}: pass -> fail, pass" in run.stdout  # listed apart, not a regression
    cells = final_cells(read_results(tmp_path / "both.jsonl"))
    assert cells[CHANGED].outcome == "wrong"
    assert [attempt["outcome"] for attempt in cells[CHANGED].detail["confirmation"]["tries"]] == ["wrong"] * 4
    assert cells[TRANSIENT].outcome == "flaky"


def test_changed_cells_are_confirmed_at_once_on_the_run_s_workers(baseline_dir: Path, tmp_path: Path) -> None:
    """Two changed cells, two workers, one try each: the tries' processes (each holding its first launch 3 s) overlap;
    one after another, as confirmation ran before, they never would."""
    run = _run(tmp_path, "faults", "parallel", "changed_add,also_changed_add", "--baseline-dir", str(baseline_dir),
               "-n", "2", "--confirm", "1", sleep_s=3)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "confirming 2 cell(s) that differ from the baseline" in run.stdout and "2 at once" in run.stdout
    cells = final_cells(read_results(tmp_path / "parallel.jsonl"))
    assert {cells[f"{kernel}/raw/eager"].detail["confirmation"]["verdict"]
            for kernel in ("changed_add", "also_changed_add")} == {"confirmed"}
    tries = [line.split() for line in (tmp_path / "tries.log").read_text().splitlines()]
    spans = [(float(start), float(end)) for _, start, end in tries]
    assert len({pid for pid, _, _ in tries}) == len(tries) >= 2  # each try a new Python
    assert any(a_start < b_end and b_start < a_end for index, (a_start, a_end) in enumerate(spans)
               for b_start, b_end in spans[index + 1:]), spans


def test_a_sampled_run_records_and_lists_the_unconfirmed_cells(baseline_dir: Path, tmp_path: Path) -> None:
    run = _run(tmp_path, "faults", "sampled", "changed_add,also_changed_add", "--baseline-dir", str(baseline_dir),
               "-n", "2", "--confirm", "1", "--confirm-threshold", "1", "--confirm-sample", "1")
    assert run.returncode == 1, run.stdout + run.stderr  # an unconfirmed regression still counts, as with --confirm 0
    assert "a sample of 1 of the 2 cells" in run.stdout and "the other 1 are recorded as unconfirmed" in run.stdout
    assert "(unconfirmed: not in the --confirm-sample)" in run.stdout and "(confirmed)" in run.stdout
    cells = final_cells(read_results(tmp_path / "sampled.jsonl"))
    verdicts = {cell_id: cell.detail["confirmation"]["verdict"] for cell_id, cell in cells.items()
                if "confirmation" in cell.detail}
    assert sorted(verdicts.values()) == ["confirmed", "unconfirmed"]
    unconfirmed = next(cells[cell_id] for cell_id, verdict in verdicts.items() if verdict == "unconfirmed")
    assert unconfirmed.outcome == "wrong" and len(unconfirmed.detail["confirmation"]["tries"]) == 1
    summary = (tmp_path / "sampled.md").read_text()
    assert "2 cells; 1 confirmed, 1 unconfirmed" in summary and f"- {unconfirmed.id}" in summary


def _tries_of(folder: Path) -> list[int]:
    """The live confirmation tries of the run whose TCM_CHANGE_DIR is `folder`: its cells' own Pythons
    (`python -m harness.run.isolation.cell_worker`), found by their environment wherever they were started."""
    wanted = f"TCM_CHANGE_DIR={folder}".encode()
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as cmdline, open(f"/proc/{name}/environ", "rb") as environ:
                if b"harness.run.isolation.cell_worker" in cmdline.read() and wanted in environ.read().split(b"\0"):
                    found.append(int(name))
        except (OSError, ValueError):
            continue
    return found


def test_ctrl_c_while_confirming_ends_the_tries_and_exits_130(baseline_dir: Path, tmp_path: Path) -> None:
    """Each try holds its first launch 300 s: before, Ctrl-C waited for it (the threads that wait on the tries never
    see the interrupt); now the tries are killed and the run ends at once, its file kept."""
    output = tmp_path / "interrupted.jsonl"
    env = dict(os.environ, TCM_CHANGE_MODE="faults", TCM_CHANGE_DIR=str(tmp_path), TCM_CHANGE_SLEEP_S="300")
    command = [sys.executable, "-m", "harness", "run", "--kernels-from", str(PLUGIN), "-k", "changed_add,also_changed_add",
               "-s", "native,raw", "-p", "eager", "--tier", resolve_tier("auto"), "-n", "2", "--confirm", "1",
               "--baseline-dir", str(baseline_dir), "-o", str(output)]
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        run = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=err, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 300
        while "2 at once" not in (tmp_path / "out").read_text():
            assert run.poll() is None and time.monotonic() < deadline, (tmp_path / "err").read_text()[-3000:]
            time.sleep(0.1)
        time.sleep(3)  # the tries have started and hold their first launch
        assert len(_tries_of(tmp_path)) == 2, "the two tries were not running when the signal came: this tests nothing"
        started = time.monotonic()
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C: the run's group, not the tries' sessions
        code = run.wait(timeout=120)
        stopped_s = time.monotonic() - started
        time.sleep(0.5)
        survivors = _tries_of(tmp_path)
    finally:
        for pid in _tries_of(tmp_path):
            os.kill(pid, signal.SIGKILL)
    err = (tmp_path / "err").read_text()
    assert code == 130 and "interrupted while confirming: the run's 4 cells are in" in err, err[-3000:]
    assert stopped_s < 60 and survivors == [], (stopped_s, survivors)
    cells = final_cells(read_results(output))
    assert len(cells) == 4 and not any("confirmation" in cell.detail for cell in cells.values())
