"""Shared artifacts in a real run (CPU tier: custom_op goes through AOTInductor and the round trips there): the
cells that export the same program load one build, in either order, with the same outcomes either way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EVERY_SHARING_PIPELINE = "aoti,aoti_strict,aoti_fresh_process,export_roundtrip,export_roundtrip_bare"


def _run(tmp_path: Path, name: str, pipelines: str, *extra: str) -> dict[str, dict]:
    output = tmp_path / f"{name}.jsonl"
    command = [sys.executable, "-m", "harness", "run", "-k", "add", "-s", "custom_op", "-p", pipelines, "--tier", "cpu",
               "-n", "1", "--baseline-dir", "none", "-o", str(output), *extra]
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    records = [json.loads(line) for line in output.read_text().splitlines()]
    return {record["id"]: record for record in records if "id" in record}


@pytest.mark.slow
def test_one_build_per_program_in_either_order_and_the_outcomes_do_not_depend_on_which_cell_built(tmp_path):
    forward = _run(tmp_path, "forward", EVERY_SHARING_PIPELINE)
    backward = _run(tmp_path, "reversed", EVERY_SHARING_PIPELINE, "--order", "reversed")
    assert {cell: r["outcome"] for cell, r in forward.items()} == {cell: r["outcome"] for cell, r in backward.items()}
    assert {cell: r.get("error") for cell, r in forward.items()} == {cell: r.get("error") for cell, r in backward.items()}
    for style in ("custom_op",):
        packages = {p: forward[f"add/{style}/{p}"]["detail"].get("reused") for p in ("aoti", "aoti_strict",
                                                                                   "aoti_fresh_process")}
        assert packages == {"aoti": None, "aoti_strict": {"aoti-package": f"add/{style}/aoti"},
                            "aoti_fresh_process": {"aoti-package": f"add/{style}/aoti"}}
        # reversed, the last pipeline builds and the others load its package: a failing cell says so too
        assert backward[f"add/{style}/aoti"]["detail"]["reused"] == {"aoti-package": f"add/{style}/aoti_fresh_process"}
        assert forward[f"add/{style}/export_roundtrip_bare"]["detail"]["reused"] == {
            "saved-program": f"add/{style}/export_roundtrip"}
    assert forward["add/custom_op/aoti_fresh_process"]["outcome"] == "fail"  # the fresh process lacks the operator
    assert "stage_s" in forward["add/custom_op/aoti"]["detail"] and \
        "compile" not in forward["add/custom_op/aoti_strict"]["detail"]["stage_s"]  # loaded, not built


def test_no_shared_artifacts_builds_in_every_cell(tmp_path):
    records = _run(tmp_path, "unshared", "export_roundtrip,export_roundtrip_bare", "--no-shared-artifacts")
    assert [r["detail"].get("reused") for r in records.values()] == [None, None]
    assert all("compile" in r["detail"]["stage_s"] for r in records.values())  # each saved its own program
