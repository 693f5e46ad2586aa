"""The nightly workflow's merge, settle, publish and history steps, run as GitHub would run them, on CPU results.

The GPU matrix itself needs GPU runners; what happens after the shards do not: the `publish` job's shell steps and the
`history` job's, read from .github/workflows/nightly-gpu.yml as text and run with bash in a copy of this checkout.
Two torch releases stand in for the two builds: the committed CPU history of torch 2.12.0 is the `stable` build
(the copy's reports/gpu-results.jsonl, the published results, is that file with one cell changed), and that of 2.13.0
the `nightly` build, whose release has no history file in the copy. Each is cut into shards with the harness's own
shard assignment (harness.run.shard), and the flaky and confirmed cells are written as `harness run --confirm`
writes them. The copy is not a git checkout: its files are what `git ls-files` lists here, and it carries its own
`harness`, so that `python -m harness.report.upkeep.refresh` rewrites the copy, never this checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.markdown.aggregate import final_cells
from harness.results import read_results
from harness.run.selection import Cell
from harness.run.shard import assign_groups

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "nightly-gpu.yml"
STABLE = REPO / "reports" / "history" / "cpu-torch2.12.0.jsonl"
NIGHTLY = REPO / "reports" / "history" / "cpu-torch2.13.0.jsonl"
MERGE_STEP = "Merge the shards, settle flaky cells"
PUBLISH_STEP = "Update the history file"
HISTORY_STEP = "Render the history, the page"
INSTALL = "python .ci/pyproject_requirements.py --install core plot"  # the history step's install: done here already
pytestmark = pytest.mark.slow


def step(name_prefix: str) -> tuple[str, str]:
    """(the step's `if:` or "", its `run: |` block dedented) for the step whose name starts with `name_prefix`."""
    text = WORKFLOW.read_text(encoding="utf-8")
    match = re.search(rf"- name: {re.escape(name_prefix)}[^\n]*\n(.*?)(\s+)run: \|\n(.*?)(?=\n\s*- (?:name|uses):|\n\n|\Z)",
                      text, re.DOTALL)
    assert match, f"{WORKFLOW.name}: no step {name_prefix!r} with a run block"
    condition = re.search(r"^\s*if: (.*)$", match.group(1), re.MULTILINE)
    lines = match.group(3).splitlines()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return (condition.group(1) if condition else ""), "\n".join(line[indent:] for line in lines) + "\n"


def job_env(name: str) -> str:
    """A value the workflow sets in an env: block (the publish job's OUTCOME_CHANGES)."""
    match = re.search(rf"^\s*{name}: \"(.*)\"$", WORKFLOW.read_text(encoding="utf-8"), re.MULTILINE)
    assert match, f"{WORKFLOW.name}: no {name} in an env: block"
    return match.group(1)


def run_step(checkout: Path, name_prefix: str, build: str, night: Path, drop: str = "") -> dict[str, str]:
    """Run the step's script in the copy as the job would for `build`; its $GITHUB_OUTPUT as a dict."""
    _, script = step(name_prefix)
    if drop:
        assert drop in script, f"{name_prefix!r} no longer has `{drop}`"
        script = script.replace(drop, "true")
    script = script.replace("python -m", f"{sys.executable} -m").replace("python -c", f"{sys.executable} -c")
    output = night / f"output-{name_prefix.split()[0]}-{build}"
    output.touch()
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
           "BUILD": build, "OUT": f"nightly/{build}", "HARNESS_ARGS": "", "SHARDS_FAILED": "false",
           "OUTCOME_CHANGES": job_env("OUTCOME_CHANGES"), "GITHUB_OUTPUT": str(output),
           "GITHUB_STEP_SUMMARY": str(night / "summary.md"), "RUNNER_TEMP": str(night), "GITHUB_SERVER_URL": "https://x",
           "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "1"}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name_prefix}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
    return dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)


def records(path: Path) -> tuple[dict, list[dict]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def write(path: Path, header: dict, cells: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in [header, *cells]), encoding="utf-8")


def write_shards(checkout: Path, source: Path, count: int, changed: dict[str, dict] | None = None) -> list[list[str]]:
    """`source` cut into `count` shards by the harness's own assignment (weighed by its durations), as the shard
    jobs upload them, with the records in `changed` in place of the source's; the cell ids of each shard."""
    header, cells = records(source)
    durations = {cell["id"]: cell["duration_s"] or 0.0 for cell in cells}
    assignment = assign_groups([Cell(c["kernel"], c["style"], c["pipeline"]) for c in cells], count, durations)
    shards = checkout / "shards"
    shutil.rmtree(shards, ignore_errors=True)
    ids = []
    for index in range(count):
        mine = [(changed or {}).get(c["id"], c) for c in cells
                if assignment[Cell(c["kernel"], c["style"], c["pipeline"]).group] == index]
        write(shards / f"results-shard-{index + 1}.jsonl", {**header, "shard": f"{index + 1}/{count}"}, mine)
        ids.append([c["id"] for c in mine])
    return ids


def confirmed(cell: dict, baseline: str, outcomes: list[str]) -> dict:
    """The record `harness run --confirm` leaves: confirmed when every try agreed with the run, else flaky."""
    verdict = "confirmed" if len(set(outcomes)) == 1 else "flaky"
    tries = [{"outcome": outcome} for outcome in outcomes]
    return {**cell, "outcome": outcomes[0] if verdict == "confirmed" else "flaky", "repeats": outcomes,
            "detail": {**cell["detail"], "confirmation": {"baseline": baseline, "verdict": verdict, "tries": tries}}}


def header_line(text: str, section: str) -> str:
    body = text.split(section, 1)[1]
    return next(line for line in body.splitlines() if line.startswith("| Capability"))


@pytest.fixture
def checkout(tmp_path_factory) -> Path:
    """A copy of this checkout's files, one per test; the published results are 2.12.0's with one passing cell
    published as failing, and 2.13.0 has no history file yet."""
    root = tmp_path_factory.mktemp("checkout")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True, timeout=60, check=True).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    header, cells = records(STABLE)
    cell = next(c for c in cells if c["outcome"] == "pass" and c["style"] != "native")
    published = {**cell, "outcome": "fail", "stage": "run", "error_type": "RuntimeError", "error": "published as failing"}
    write(root / "reports" / "gpu-results.jsonl", header, [published if c["id"] == cell["id"] else c for c in cells])
    (root / "reports" / "history" / NIGHTLY.name).unlink()
    (root / "reports" / "history.md").write_text("stale\n", encoding="utf-8")
    return root


@pytest.fixture
def changed_cell() -> dict:
    """The cell the published results hold as failing and tonight's runs as passing."""
    _, cells = records(STABLE)
    return next(c for c in cells if c["outcome"] == "pass" and c["style"] != "native")


def test_a_flaky_change_is_settled_to_the_published_record_and_opens_no_pull_request(checkout, changed_cell, tmp_path):
    shards = write_shards(checkout, STABLE, 2, {changed_cell["id"]: confirmed(changed_cell, "fail", ["pass", "fail"])})
    assert all(shards) and not set(shards[0]) & set(shards[1])
    outputs = run_step(checkout, MERGE_STEP, "stable", tmp_path)
    assert outputs == {"status": "0", "changed": "false"}
    merged = final_cells(read_results(checkout / "nightly" / "stable" / "results.jsonl"))
    whole = {c["id"]: c for c in records(STABLE)[1]}
    assert set(merged) == set(whole) and sum(map(len, shards)) == len(whole)  # the shards' merge is the whole run
    assert {i: c.outcome for i, c in merged.items() if i != changed_cell["id"]} == {
        i: c["outcome"] for i, c in whole.items() if i != changed_cell["id"]}
    assert merged[changed_cell["id"]].outcome == "flaky"
    settled = final_cells(read_results(checkout / "nightly" / "stable" / "settled.jsonl"))
    assert settled[changed_cell["id"]].outcome == "fail"  # the published record, kept
    assert settled[changed_cell["id"]].error == "published as failing"
    assert "## Flaky (1)" in (checkout / "nightly" / "stable" / "diff-with-flaky.md").read_text()
    condition, _ = step(PUBLISH_STEP)
    assert "steps.diff.outputs.changed == 'true'" in condition  # changed=false: no publish, and so no pull request
    assert step("Open a pull request")[0] == "steps.publish.outcome == 'success'"


def test_a_change_of_error_line_alone_opens_no_pull_request(checkout, changed_cell, tmp_path):
    _, cells = records(STABLE)
    failing = next(c for c in cells if c["outcome"] not in ("pass", "skip") and c["error"])
    write_shards(checkout, STABLE, 2, {failing["id"]: {**failing, "error": "another message"},
                                       changed_cell["id"]: confirmed(changed_cell, "fail", ["pass", "fail"])})
    assert run_step(checkout, MERGE_STEP, "stable", tmp_path) == {"status": "0", "changed": "false"}
    assert "## Changed errors (1)" in (checkout / "nightly" / "stable" / "diff.md").read_text()


def test_a_confirmed_change_publishes_the_stable_build_and_its_history(checkout, changed_cell, tmp_path):
    write_shards(checkout, STABLE, 3, {changed_cell["id"]: confirmed(changed_cell, "fail", ["pass"] * 4)})
    assert run_step(checkout, MERGE_STEP, "stable", tmp_path) == {"status": "0", "changed": "true"}
    assert "## Newly supported (1)" in (checkout / "nightly" / "stable" / "diff.md").read_text()
    run_step(checkout, PUBLISH_STEP, "stable", tmp_path)
    published = final_cells(read_results(checkout / "reports" / "gpu-results.jsonl"))
    kept = final_cells(read_results(checkout / "reports" / "history" / STABLE.name))
    assert published[changed_cell["id"]].outcome == kept[changed_cell["id"]].outcome == "pass"
    assert all(cell.traceback is None for cell in published.values())
    torch, triton = (read_results(STABLE).environment[k] for k in ("torch", "triton"))
    assert (checkout / "matrix" / "expected" / f"{torch}-{triton}-cpu.json").is_file()
    assert "Newly supported" in (tmp_path / "pr-body.md").read_text()
    history = (checkout / "reports" / "history.md").read_text(encoding="utf-8")
    assert "torch 2.13.0" not in header_line(history, "## CPU")


def test_the_next_release_gains_its_history_columns_then_opens_no_pull_request_unchanged(checkout, tmp_path):
    write_shards(checkout, NIGHTLY, 2)
    kept = checkout / "reports" / "history" / NIGHTLY.name
    assert not kept.exists()
    assert run_step(checkout, MERGE_STEP, "nightly", tmp_path)["changed"] == "true"  # its release's first record
    run_step(checkout, PUBLISH_STEP, "nightly", tmp_path)
    assert {i: c.outcome for i, c in final_cells(read_results(kept)).items()} == {
        c["id"]: c["outcome"] for c in records(NIGHTLY)[1]}
    history = (checkout / "reports" / "history.md").read_text(encoding="utf-8")
    columns = header_line(history, "## CPU")
    assert "torch 2.13.0" in columns and "torch 2.12.0" in columns
    assert columns.index("torch 2.13.0") < columns.index("torch 2.12.0")  # newest first
    write_shards(checkout, NIGHTLY, 2)  # the next night, the same outcomes: compared with the release's own record now
    assert run_step(checkout, MERGE_STEP, "nightly", tmp_path) == {"status": "0", "changed": "false"}
    assert f"old: reports/history/{NIGHTLY.name}" in (checkout / "nightly" / "nightly" / "diff.md").read_text()


def test_the_history_job_renders_every_build_of_the_night(checkout, tmp_path):
    for build, source in (("stable", STABLE), ("nightly", NIGHTLY)):
        if not (checkout / "nightly" / build / "results.jsonl").is_file():
            write_shards(checkout, source, 2)
            run_step(checkout, MERGE_STEP, build, tmp_path)
    (checkout / "nights").mkdir(exist_ok=True)
    run_step(checkout, HISTORY_STEP, "stable", tmp_path, drop=INSTALL)
    columns = header_line((checkout / "history" / "history.md").read_text(encoding="utf-8"), "## CPU")
    assert "torch 2.13.0" in columns and "torch 2.12.0" in columns


def test_a_release_without_a_history_file_keeps_its_first_record_even_with_nothing_changed(checkout, tmp_path):
    header, cells = records(checkout / "reports" / "gpu-results.jsonl")  # tonight's outcomes are the published ones
    source = tmp_path / "next.jsonl"
    write(source, {**header, "environment": {**header["environment"], "torch": "2.16.0.dev20261203+cpu"}}, cells)
    write_shards(checkout, source, 2)
    assert run_step(checkout, MERGE_STEP, "nightly", tmp_path) == {"status": "0", "changed": "true"}
    assert not re.search(job_env("OUTCOME_CHANGES"), (checkout / "nightly" / "nightly" / "diff.md").read_text(),
                         re.MULTILINE)
    run_step(checkout, PUBLISH_STEP, "nightly", tmp_path)
    assert (checkout / "reports" / "history" / "cpu-torch2.16.0.jsonl").is_file()
