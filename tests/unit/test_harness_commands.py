"""tests/harness_commands.py forks the suite's `python -m harness` commands from a starter: each must end as the
same command in a new Python ends (status, output, folder, environment, stdin, argv), or the suite's CLI tests
would test something else than what a user runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness_commands import _starter_key, forked_cpu_seconds, harness_command, module_command

PROBE = '''\
import json, os, sys, tempfile
if "--raise" in sys.argv:
    raise ValueError("raised by the probe")
if "--signal" in sys.argv:
    os.kill(os.getpid(), 9)
if "--sleep" in sys.argv:
    import time
    time.sleep(60)
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0], "tcm": os.environ.get("TCM_PROBE"),
                  "tmp": tempfile.gettempdir(), "stdin": sys.stdin.read(), "main": __name__}))
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("TCM_PROBE_EXIT", "0")))
'''


def both(folder: Path, args: list[str], env: dict[str, str], input: str | None = None):
    """The probe as a new Python and as a forked command."""
    new = subprocess.run([sys.executable, "-m", "probe", *args], cwd=folder, env=env, input=input, capture_output=True,
                         text=True, timeout=120)
    return new, module_command("probe", args, cwd=folder, env=env, input=input, timeout=120)


@pytest.fixture
def probe_folder(tmp_path: Path) -> Path:
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "own-tmp").mkdir()
    return tmp_path


def test_a_forked_module_sees_what_a_new_python_sees(probe_folder):
    env = {**os.environ, "TCM_PROBE": "set", "TCM_PROBE_EXIT": "3", "TMPDIR": str(probe_folder / "own-tmp")}
    new, forked = both(probe_folder, ["a", "--b"], env, input="typed")
    assert (forked.returncode, forked.stdout, forked.stderr) == (new.returncode, new.stdout, new.stderr) == (
        3, new.stdout, "to stderr\n")
    assert '"tcm": "set"' in new.stdout and f'"tmp": "{probe_folder / "own-tmp"}"' in new.stdout
    assert '"stdin": "typed"' in new.stdout and '"main": "__main__"' in new.stdout


def test_an_uncaught_exception_and_a_signal_end_it_as_they_end_python(probe_folder):
    new, forked = both(probe_folder, ["--raise"], dict(os.environ))
    assert forked.returncode == new.returncode == 1
    assert forked.stderr.splitlines()[-1] == new.stderr.splitlines()[-1] == "ValueError: raised by the probe"
    new, forked = both(probe_folder, ["--signal"], dict(os.environ))
    assert forked.returncode == new.returncode == -9


def test_a_command_past_its_limit_is_killed_and_raises_as_subprocess_run_does(probe_folder):
    with pytest.raises(subprocess.TimeoutExpired):
        module_command("probe", ["--sleep"], cwd=probe_folder, timeout=1)


def test_only_variables_read_while_a_command_runs_share_a_starter():
    base = {"PATH": "/bin", "PYTHONWARNINGS": "ignore"}
    assert _starter_key({**base, "TCM_X": "1", "TMPDIR": "/a", "PYTEST_CURRENT_TEST": "t"}) == _starter_key(base)
    assert _starter_key({**base, "PYTHONWARNINGS": "default"}) != _starter_key(base)
    assert _starter_key({**base, "TORCH_LOGS": "+dynamo"}) != _starter_key(base)


@pytest.mark.slow
def test_a_harness_command_gives_what_python_m_harness_gives_and_its_cpu_is_counted():
    repo = Path(__file__).resolve().parents[2]
    for args in (["list"], ["run", "-p", "eagre"]):
        new = subprocess.run([sys.executable, "-m", "harness", *args], cwd=repo, capture_output=True, text=True, timeout=300)
        before = forked_cpu_seconds()
        forked = harness_command(args, timeout=300)
        assert (forked.returncode, forked.stdout, forked.stderr) == (new.returncode, new.stdout, new.stderr)
        assert forked_cpu_seconds() > before
