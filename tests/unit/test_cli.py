"""The command line's listing. Bad input (unknown names, a missing plug-in, an existing or unwritable output) is
tests/unit/test_hostile_input.py's: one line, exit 2, nothing on disk touched."""

from pathlib import Path

from harness_commands import harness_command

REPO = Path(__file__).resolve().parents[2]


def harness(*args, cwd=REPO):
    return harness_command(args, cwd=cwd, timeout=300)


def test_list_names_kernels_styles_and_pipelines():
    completed = harness("list")
    assert completed.returncode == 0
    for name in ("add", "sin", "silu", "triton_op", "aoti_fresh_process", "compile_visible"):
        assert name in completed.stdout
