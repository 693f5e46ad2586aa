"""The committed API-choice chart is exactly what the committed GPU results render to."""

from pathlib import Path

from harness_commands import harness_command

REPO = Path(__file__).resolve().parents[2]


def test_reports_api_choice_is_fresh():
    completed = harness_command(["docs", "reports/api-choice.md", "--check"], timeout=120)
    assert completed.returncode == 0, "reports/api-choice.md is stale; run `nox -s docs`\n" + completed.stdout[-3000:]
