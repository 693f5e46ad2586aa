"""What the end-to-end zygote tests (test_loader_zygote, test_worker_start) read from a run and check after it."""

import json
import subprocess
from pathlib import Path


def cells_of(path: Path) -> dict[str, dict]:
    """A results file's cell records by cell id."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return {record["id"]: record for record in records if record["record"] == "cell"}


def assert_no_zygote_left(own_tmp: Path) -> None:
    """The runs made under TMPDIR=own_tmp left neither their zygote's folder nor the zygote itself."""
    assert not list(own_tmp.glob("tcm-loader-*")), "the run left its zygote's folder behind"
    leftover = subprocess.run(["pgrep", "-f", f"harness.run.loader_zygote {own_tmp}"], capture_output=True, text=True)
    assert leftover.stdout == "", "the run left its zygote running"
