"""Every fault of issue #7 through the real engine, on this machine's tier, as one table.

Three runs of `python -m harness run` in one worker (the default, worker isolation), shared with
test_isolation.py (fault_runs.py): the eager faults with witnesses before (`add`) and after (`after_add`,
`after_sin`) them, the compile fault with a witness after it, and a clean run of the witnesses alone. For each
fault: its cell gets the expected outcome and stage, and so does its cell in every other style that launches;
its `native` control equals the clean `add` control in the same pipeline; every witness equals the clean run;
the run finishes (exit 0). GPU faults are asked only on the GPU tier.

Set TCM_FAULT_TABLE=path.md to get the table as Markdown (the lead collects it on the H100).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fault_runs import ASKED, FAULTS, FAULTS_MODULE, LAUNCHING_STYLES, PIPELINES, REPO, TIER, TIMEOUT_S, WITNESSES, Fault, cells
from harness_commands import harness_command

from harness.results import CellResult, read_results


def verdict(cell: CellResult | None) -> str:
    if cell is None:
        return "no result"
    return cell.outcome + (f" at {cell.stage}" if cell.stage else "") + (f" ({cell.error_type})" if cell.error_type else "")


def check_fault(fault: Fault, folder: Path) -> tuple[str, list[str], list[str]]:
    """(what was observed, the fault's own problems, its neighbours' problems): the fault's cell and its cells in
    the run's other launching styles, then its `native` control and the witnesses of its run."""
    run, clean = cells(folder, fault.run), cells(folder, "clean")
    cell = run.get(f"{fault.kernel}/{fault.cell}")
    if cell is None:
        return "no result", [f"{fault.kernel}/{fault.cell}: no result"], []
    own, neighbours = [], []
    pipeline = cell.pipeline
    for style in LAUNCHING_STYLES[fault.run]:
        launched = run.get(f"{fault.kernel}/{style}/{pipeline}")
        if launched is None:
            own.append(f"{fault.kernel}/{style}/{pipeline}: no result")
            continue
        expected = (launched.outcome, launched.stage) == (fault.outcome, fault.stage)
        if not expected or fault.error_type not in (None, launched.error_type):
            own.append(f"{launched.id}: expected {fault.outcome} at {fault.stage} ({fault.error_type}), got {verdict(launched)}")
        if fault.message.lower() not in (launched.error or "").lower():
            own.append(f"{launched.id}: {fault.message!r} not in its first line {(launched.error or '')[:200]!r}")
    for other in (c for c in run.values() if c.kernel == fault.kernel and c.style not in LAUNCHING_STYLES[fault.run]):
        twin = clean.get(f"add/{other.style}/{other.pipeline}")
        if verdict(other) != verdict(twin):
            neighbours.append(f"{other.id}: {verdict(other)}, but add in a clean run: {verdict(twin)}")
    for witness in (c for c in run.values() if c.kernel in WITNESSES):
        if verdict(witness) != verdict(clean.get(witness.id)):
            neighbours.append(f"witness {witness.id}: {verdict(witness)}, in a clean run {verdict(clean.get(witness.id))}")
    return verdict(cell), own, neighbours


def fault_table(folder: Path) -> tuple[str, list[str]]:
    """The Markdown fault table, and every problem found."""
    header = read_results(folder / "eager.jsonl").header
    env = header["environment"]
    where = f"GPU {env.get('gpu')}" if TIER == "gpu" else "CPU interpreter tier (TRITON_INTERPRET=1)"
    lines = [f"Faults measured on the {where}; torch {env.get('torch')}, triton {env.get('triton')}; worker isolation, "
             f"one worker; per-cell limits {TIMEOUT_S['eager']} s (eager run), {TIMEOUT_S['compile']} s (compile run).", "",
             "| fault | cell | expected | observed | neighbours intact |", "|---|---|---|---|---|"]
    problems: list[str] = []
    for fault in FAULTS:
        expected = f"{fault.outcome} at {fault.stage}" + (f" ({fault.error_type})" if fault.error_type else "")
        if fault not in ASKED:
            lines.append(f"| {fault.what} | {fault.kernel}/{fault.cell} | {expected} | not asked: needs a GPU | - |")
            continue
        observed, own, neighbours = check_fault(fault, folder)
        intact = "no" if neighbours else "yes"
        lines.append(f"| {fault.what} | {fault.kernel}/{fault.cell} | {expected} | {observed} | {intact} |")
        problems += own + neighbours
    return "\n".join(lines) + "\n", problems


@pytest.mark.slow
def test_every_fault_gets_its_outcome_and_leaves_its_neighbours_intact(fault_runs: Path) -> None:
    table, problems = fault_table(fault_runs)
    if os.environ.get("TCM_FAULT_TABLE"):
        Path(os.environ["TCM_FAULT_TABLE"]).write_text(table)
    assert problems == [], table + "\n" + "\n".join(problems)
    clean = cells(fault_runs, "clean")
    styles = {"native", *LAUNCHING_STYLES["eager"]}
    assert any(c.outcome == "pass" for c in clean.values()) and len(clean) == len(WITNESSES) * len(styles) * len(PIPELINES)


@pytest.mark.slow
def test_the_live_count_says_how_many_workers_were_replaced_and_nothing_else_interrupts_it(fault_runs: Path) -> None:
    """Each worker a cell ended (a crash, a timeout, a changed global state) prints xdist's `node down` line; the live
    count's lines say how many there were, and no status letter (`R`) is strewn among them."""
    log = (fault_runs / "eager.log").read_text()
    ended = [c.id for c in cells(fault_runs, "eager").values()
             if c.outcome in ("crash", "timeout") or c.detail.get("worker_retired")]
    counts = [line for line in log.splitlines() if re.match(r"\[\d+/\d+\] ", line)]
    assert len(ended) >= 8 and log.count("] node down: ") == len(ended), (ended, log[-3000:])
    assert counts and f", {len(ended)} workers replaced; " in counts[-1], counts[-3:]
    strays = [line for line in log.splitlines() if re.match(r"R+(\[|$)", line)]
    assert strays == [], strays


@pytest.mark.slow
@pytest.mark.parametrize("fault", [f for f in FAULTS if f.gpu_only], ids=lambda f: f.kernel)
def test_gpu_fault(fault: Fault, fault_runs: Path) -> None:
    """The GPU faults one by one, so a GPU run names the one that broke; on the CPU tier they cannot be asked."""
    if fault not in ASKED:
        pytest.skip("a GPU fault: asked on the GPU tier only")
    _, own, neighbours = check_fault(fault, fault_runs)
    assert own + neighbours == [], "\n".join(own + neighbours)


UNESCAPED_PIPE = re.compile(r"(?<!\\)(?:\\\\)*\|")


def assert_safe_markdown(text: str, where: str) -> None:
    """No live HTML, no unbounded line, and every table row has its header's number of cells."""
    assert "<script" not in text and "<img" not in text and "</table>" not in text, where
    assert "A" * 600 not in text, f"{where}: the 10,000 characters were not bounded"
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith("|") and index + 1 < len(lines) and re.fullmatch(r"\|(-+\|)+", lines[index + 1]):
            width = len(UNESCAPED_PIPE.findall(line))
            row = index + 2
            while row < len(lines) and lines[row].startswith("|"):
                assert len(UNESCAPED_PIPE.findall(lines[row])) == width, f"{where}: {lines[row][:300]}"
                row += 1


@pytest.mark.slow
def test_a_hostile_message_is_bounded_in_the_results_and_escaped_in_every_report(fault_runs: Path) -> None:
    from fault_kernels import HOSTILE_FIRST_LINE

    cell = cells(fault_runs, "eager")["fault_markdown/raw/eager"]
    assert "\n" not in cell.error and 100 < len(cell.error) <= 500
    assert HOSTILE_FIRST_LINE.startswith(cell.error)  # the first line, cut: nothing from the lines after it
    raw_line = next(line for line in (fault_runs / "eager.jsonl").read_text().splitlines() if "fault_markdown/raw/eager" in line)
    record = json.loads(raw_line)
    assert record["error"] == cell.error
    assert len(json.dumps({k: v for k, v in record.items() if k != "traceback"})) < 2000
    assert HOSTILE_FIRST_LINE in record["traceback"] and len(record["traceback"]) <= 25_000  # whole, but bounded
    report = harness_command(["report", str(fault_runs / "eager.jsonl")], timeout=120)
    assert report.returncode == 0, report.stderr
    for where, text in (("report", report.stdout), ("run summary", (fault_runs / "eager.md").read_text())):
        assert "&lt;script&gt;" in text, where  # it is there, as text
        assert_safe_markdown(text, where)


@pytest.mark.slow
def test_the_torch_dirty_fault_would_poison_a_shared_process() -> None:
    """Without isolation its corruption reaches the next cell: proof that the witnesses test something."""
    script = (
        "from harness.run.cell import CellRequest\n"
        "from harness.run.isolation import run_inline\n"
        f"spec = dict(tier='cpu', kernels_from=[{str(FAULTS_MODULE)!r}])\n"
        "print(run_inline(CellRequest('after_add', 'raw', 'eager', **spec)).outcome)\n"
        "print(run_inline(CellRequest('fault_dirty_torch', 'raw', 'eager', **spec)).outcome)\n"
        "print(run_inline(CellRequest('after_add', 'raw', 'eager', **spec)).outcome)\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300,
                               env={**os.environ, "TRITON_INTERPRET": "1"})
    assert completed.stdout.split() == ["pass", "fail", "fail"], completed.stdout + completed.stderr[-2000:]
