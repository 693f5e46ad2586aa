"""The committed API-choice chart is exactly what the committed GPU results render to."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_reports_api_choice_is_fresh():
    completed = subprocess.run(
        [sys.executable, "-m", "harness", "docs", "reports/api-choice.md", "--check"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, "reports/api-choice.md is stale; run `nox -s docs`\n" + completed.stdout[-3000:]
