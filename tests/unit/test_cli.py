"""The command line: bad input is one line and exit 2, nothing on disk is overwritten unasked."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def harness(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_list_names_kernels_styles_and_pipelines():
    completed = harness("list")
    assert completed.returncode == 0
    for name in ("add", "sin", "silu", "triton_op", "aoti_fresh_process", "compile_visible"):
        assert name in completed.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "-k", "nope"], "error: unknown kernel 'nope'; valid kernels: add, sin, silu"),
    (["run", "-s", "raww"], "error: unknown style 'raww'; valid styles: native, raw, autograd_function"),
    (["run", "-p", "eagre"], "error: unknown pipeline 'eagre'; valid pipelines: eager,"),
    (["run", "--kernels-from", "/no/such.py"], "error: /no/such.py: no such kernel file"),
])
def test_unknown_names_get_one_line_and_exit_2(args, message):
    completed = harness(*args)
    assert completed.returncode == 2
    assert completed.stderr.strip().startswith(message)
    assert len(completed.stderr.strip().splitlines()) == 1


def test_an_existing_results_file_is_not_overwritten(tmp_path):
    existing = tmp_path / "results.jsonl"
    existing.write_text("precious\n")
    completed = harness("run", "-k", "add", "-p", "eager", "-o", str(existing))
    assert completed.returncode == 2 and "exists" in completed.stderr
    assert existing.read_text() == "precious\n"


def test_an_unwritable_output_is_refused_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    completed = harness("run", "-k", "add", "-p", "eager", "-o", str(blocker / "r.jsonl"))
    assert completed.returncode == 2 and "cannot create its folder" in completed.stderr
