"""Shared artifacts in a real run (CPU tier: custom_op goes through AOTInductor and the round trips there): the
cells that export the same program load one build, in either order, with the same outcomes either way."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.run.caches import caches_root

REPO = Path(__file__).resolve().parents[2]
ROUND_TRIPS = "export_roundtrip,export_roundtrip_bare"


def _run(tmp_path: Path, name: str, pipelines: str, *extra: str,
         environment: dict[str, str] | None = None) -> dict[str, dict]:
    output = tmp_path / f"{name}.jsonl"
    command = ["run", "-k", "add", "-s", "custom_op", "-p", pipelines, "--tier", "cpu",
               "-n", "1", "--baseline-dir", "none", "-o", str(output), *extra]
    run = harness_command(command, timeout=900, env=environment)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    records = [json.loads(line) for line in output.read_text().splitlines()]
    return {record["id"]: record for record in records if "id" in record}


def _own_temporary_folder(tmp_path: Path) -> dict[str, str]:
    """The environment with a temporary folder of the test's own, in which the machine's kept caches (bytecode, the
    ISA probe's outputs: harness.run.caches) are a link to the real ones, so that the run pays nothing extra."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    kept = caches_root()
    kept.mkdir(exist_ok=True)
    (folder / kept.name).symlink_to(kept, target_is_directory=True)
    return {**os.environ, "TMPDIR": str(folder)}


def _left_behind(folder: Path) -> list[str]:
    """What a run left under `folder` (the links not followed) that it made for itself or for one cell: the
    extraction of a package (`aotinductor_*`) or a run's own folder (`tcm-*`, but the kept caches). Not counted:
    the caches torch and pytest keep for themselves (Inductor's precompiled headers, which torch never
    removes: docs/maintainers.md, "The harness's own tests"; pytest's last three temporary folders)."""
    return sorted(os.path.relpath(os.path.join(parent, name), folder)
                  for parent, folders, files in os.walk(folder) for name in folders + files
                  if name.startswith("aotinductor_")
                  or (parent == str(folder) and name.startswith("tcm-") and name != caches_root().name))


@pytest.fixture(scope="module")
def forward(tmp_path_factory):
    """One run of the five artifact pipelines in their own order, with a temporary folder of its own: the fresh
    process's failed load (torch leaves the package's extraction behind when a load fails) extracts into the cell's
    folder, and the run must leave nothing behind. Both tests read it."""
    folder = tmp_path_factory.mktemp("forward")
    records = _run(folder, "forward", f"aoti,aoti_strict,aoti_fresh_process,{ROUND_TRIPS}",
                   environment=_own_temporary_folder(folder))
    return records, _left_behind(folder / "tmp")


@pytest.mark.slow
def test_the_three_aoti_pipelines_build_one_package_and_a_failing_cell_names_the_build_it_loaded(forward):
    records, left_behind = forward
    assert left_behind == []
    assert {p: records[f"add/custom_op/{p}"]["detail"].get("reused") for p in ("aoti", "aoti_strict",
                                                                             "aoti_fresh_process")} == {
        "aoti": None, "aoti_strict": {"aoti-package": "add/custom_op/aoti"},
        "aoti_fresh_process": {"aoti-package": "add/custom_op/aoti"}}
    assert records["add/custom_op/aoti_fresh_process"]["outcome"] == "fail"  # the fresh process lacks the operator
    assert "compile" in records["add/custom_op/aoti"]["detail"]["stage_s"]
    assert "compile" not in records["add/custom_op/aoti_strict"]["detail"]["stage_s"]  # loaded, not built


@pytest.mark.slow
def test_either_order_or_none_shared_gives_the_same_outcomes_and_error_lines(forward, tmp_path):
    forward = {cell: record for cell, record in forward[0].items() if record["pipeline"] in ROUND_TRIPS.split(",")}
    backward = _run(tmp_path, "reversed", ROUND_TRIPS, "--order", "reversed")
    unshared = _run(tmp_path, "unshared", ROUND_TRIPS, "--no-shared-artifacts")
    for other in (backward, unshared):
        assert {cell: (r["outcome"], r.get("error")) for cell, r in forward.items()} == \
            {cell: (r["outcome"], r.get("error")) for cell, r in other.items()}
    assert forward["add/custom_op/export_roundtrip_bare"]["detail"]["reused"] == {
        "saved-program": "add/custom_op/export_roundtrip"}
    # reversed, the bare round trip saves first and the other loads its file
    assert backward["add/custom_op/export_roundtrip"]["detail"]["reused"] == {
        "saved-program": "add/custom_op/export_roundtrip_bare"}
    assert [r["detail"].get("reused") for r in unshared.values()] == [None, None]
    assert all("compile" in r["detail"]["stage_s"] for r in unshared.values())  # each saved its own program
