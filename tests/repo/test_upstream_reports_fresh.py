"""The committed findings page and tutorial comparison are what their commands make of the committed GPU results.

reports/findings.md embeds reproducers made of the harness's own code, so a change to a style or a pipeline makes it
stale: regenerate it with the command in the assertion message.
"""

from pathlib import Path

from harness_commands import harness_command

from harness.report.upkeep.refresh import TUTORIAL_COMPARISON, tutorial_comparison_text

REPO = Path(__file__).resolve().parents[2]
FINDINGS_COMMAND = ["-m", "harness", "findings", "reports/gpu-results.jsonl"]


def test_reports_findings_is_fresh():
    completed = harness_command(FINDINGS_COMMAND[2:], timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    committed = (REPO / "reports" / "findings.md").read_text(encoding="utf-8")
    rerun = f"python {' '.join(FINDINGS_COMMAND)} -o reports/findings.md"
    assert completed.stdout == committed, f"reports/findings.md is stale; run {rerun}"


def test_reports_tutorial_comparison_is_fresh():
    committed = (REPO / TUTORIAL_COMPARISON).read_text(encoding="utf-8")
    assert tutorial_comparison_text(REPO, REPO / "reports" / "gpu-results.jsonl") == committed, \
        "reports/tutorial-comparison.md is stale; run python -m harness.report.upkeep.refresh"
