"""--resume: only the same environment continues a file, a torn tail is cut (never a finished cell), the command is rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.results import read_results
from harness.run.earlier.resume import ResumeError, check_resumable, repair_torn_tail, resume_command

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENT = {"torch": "2.13.0+cpu", "triton": "3.7.1", "tier": "cpu", "cpu_count": 2}


def cell_line(cell_id: str, outcome: str = "pass") -> str:
    kernel, style, pipeline = cell_id.split("/")
    record = {"record": "cell", "id": cell_id, "kernel": kernel, "style": style, "pipeline": pipeline, "outcome": outcome}
    return json.dumps(record, sort_keys=True) + "\n"


def results_file(path: Path, environment: dict, *lines: str) -> Path:
    header = {"record": "header", "schema": 1, "environment": environment, "started": "2026-01-01T00:00:00+00:00"}
    path.write_text(json.dumps(header) + "\n" + "".join(lines))
    return path


def test_a_torn_last_line_is_cut_and_every_finished_cell_kept(tmp_path):
    path = results_file(tmp_path / "r.jsonl", ENVIRONMENT, cell_line("add/native/eager"), cell_line("add/raw/eager"))
    whole = path.read_bytes()
    path.write_bytes(whole + cell_line("add/custom_op/eager")[:40].encode())
    assert repair_torn_tail(path) == 40
    assert path.read_bytes() == whole
    assert [cell.id for cell in read_results(path).cells] == ["add/native/eager", "add/raw/eager"]
    assert repair_torn_tail(path) == 0 and path.read_bytes() == whole  # idempotent


def test_an_unterminated_line_that_is_whole_json_is_kept_and_terminated(tmp_path):
    path = results_file(tmp_path / "r.jsonl", ENVIRONMENT, cell_line("add/native/eager"), cell_line("add/raw/eager").rstrip("\n"))
    assert repair_torn_tail(path) == 0
    assert path.read_text().endswith("}\n")
    assert [cell.id for cell in read_results(path).cells] == ["add/native/eager", "add/raw/eager"]


@pytest.mark.parametrize("key, value", [("torch", "2.12.0+cpu"), ("triton", "3.6.0"), ("tier", "gpu")])
def test_another_environment_may_not_continue_a_file(tmp_path, key, value):
    path = results_file(tmp_path / "r.jsonl", {**ENVIRONMENT, key: value}, cell_line("add/native/eager"))
    with pytest.raises(ResumeError) as raised:
        check_resumable(path, ENVIRONMENT)
    assert f"{path}: recorded with {key} '{value}', this run has '{ENVIRONMENT[key]}'" in str(raised.value)


def test_the_machine_may_differ(tmp_path):
    path = results_file(tmp_path / "r.jsonl", {**ENVIRONMENT, "cpu_count": 16}, cell_line("add/native/eager"))
    assert [cell.id for cell in check_resumable(path, ENVIRONMENT).cells] == ["add/native/eager"]


@pytest.mark.parametrize("content, message", [
    (None, "{path}: no such results file to resume"),
    ("", "cannot resume: {path}: "),  # the reader's own one-line reason follows
    ("not json\n", "cannot resume: {path}:"),
])
def test_an_unreadable_file_cannot_be_resumed(tmp_path, content, message):
    path = tmp_path / "r.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ResumeError) as raised:
        check_resumable(path, ENVIRONMENT)
    assert str(raised.value).startswith(message.format(path=path)) and "\n" not in str(raised.value)


@pytest.mark.parametrize("command, expected", [
    (["python", "-m", "harness", "run", "-k", "add", "-o", "r.jsonl", "--overwrite"],
     "python -m harness run -k add --resume r.jsonl"),
    (["triton-matrix", "run", "--output=r.jsonl", "-n", "2"], "triton-matrix run -n 2 --resume r.jsonl"),
    (["triton-matrix", "run", "-or.jsonl", "--over", "--resume", "old.jsonl"], "triton-matrix run --resume r.jsonl"),
    (["triton-matrix", "run", "--shard", "1/2", "--", "-o", "x=y"], "triton-matrix run --shard 1/2 --resume r.jsonl -- -o x=y"),
    (["triton-matrix", "run", "-p", "eager", "--resume=r.jsonl"], "triton-matrix run -p eager --resume r.jsonl"),
])
def test_the_resume_command_replaces_the_output_options(command, expected):
    assert resume_command(command, "r.jsonl") == expected


def test_a_path_with_spaces_is_quoted():
    assert resume_command(["triton-matrix", "run"], "my results.jsonl") == "triton-matrix run --resume 'my results.jsonl'"


def harness(*args):
    return harness_command(args, timeout=300)


def test_resuming_a_file_of_another_environment_is_one_line_exit_2_and_leaves_it_untouched(tmp_path):
    path = results_file(tmp_path / "r.jsonl", {**ENVIRONMENT, "torch": "1.0"}, cell_line("add/native/eager"), "torn")
    before = path.read_bytes()
    completed = harness("run", "--tier", "cpu", "-k", "add", "-p", "eager", "--resume", str(path))
    assert completed.returncode == 2
    assert completed.stderr.strip().startswith(f"error: {path}: recorded with torch '1.0', this run has")
    assert len(completed.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before  # not even the torn tail is cut


@pytest.mark.parametrize("extra, message", [
    (["--overwrite"], "--resume appends to its results file; --overwrite would replace it"),
    (["-o", "other.jsonl"], "appends to that file; -o/--output names another"),
])
def test_contradicting_options_are_refused(tmp_path, extra, message):
    path = results_file(tmp_path / "r.jsonl", ENVIRONMENT, cell_line("add/native/eager"))
    completed = harness("run", "--tier", "cpu", "-k", "add", "-p", "eager", "--resume", str(path), *extra)
    assert completed.returncode == 2 and message in completed.stderr
