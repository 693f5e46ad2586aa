"""`harness_command(args, ...)`: what `subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
text=True, ...)` returns, from a command forked by tests/command_starter.py instead of a new Python.

Why: a new Python per command paid `import torch` and the CLI's imports again, about 2.5 CPU seconds of each of the
suite's 150 or so harness commands (docs/maintainers.md, "The harness's own tests"). One starter per environment:
the variables a starting Python and `import torch` read must be those the command would have started with, so an
environment that differs from every running starter's gets a starter of its own. Only the harness's own variables
(`TCM_*`, read when a command runs), TMPDIR (which the forked command makes `tempfile` read again) and pytest's
PYTEST_CURRENT_TEST may differ between the commands one starter forks.

A run's zygote and its cells' processes in process isolation are forked too, by the starter's zygote maker
(tests/zygote_maker.py): each `harness` command is told to start them through tests/zygote_launcher.py
(harness.run.startup.command_lines's two variables), which asks the maker, and starts a new Python where the maker refuses
(an environment the maker was not started with).

A test that needs the process itself (signals, output while it runs) starts `python -m harness` with subprocess, as
before. The CPU time of the forked commands is counted (`forked_cpu_seconds`): tests/conftest.py adds it to a test's
own, so that the `slow` marker's rule sees what a test's commands cost.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from harness.run.startup.command_lines import CELL_PYTHON_VARIABLE, ZYGOTE_PYTHON_VARIABLE

REPO = Path(__file__).resolve().parents[1]
STARTER = Path(__file__).with_name("command_starter.py")
LAUNCHER = Path(__file__).with_name("zygote_launcher.py")
# Besides every TCM_* variable (see the module's docstring); pytest names the current test in PYTEST_CURRENT_TEST.
_RUN_TIME_VARIABLES = ("TMPDIR", "PYTEST_CURRENT_TEST")
_forked_cpu_s = 0.0
_starters: dict[frozenset[tuple[str, str]], _Starter] = {}  # oldest first
_MOST_STARTERS = 4  # a test may change the environment of every command: the oldest starter then ends
_lock = threading.Lock()
_ids = itertools.count()


def forked_cpu_seconds() -> float:
    """The CPU time of every command this process had forked that has ended (its own and its waited children's)."""
    return _forked_cpu_s


def _starter_key(env: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset((name, value) for name, value in env.items()
                     if not name.startswith("TCM_") and name not in _RUN_TIME_VARIABLES)


class _Starter:
    """One command_starter.py process and the commands it forks; `run` blocks until its command has ended."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tcm-zygotes-"))
        address = str(self.folder / "maker.sock")
        self.launcher = shlex.join([sys.executable, "-I", "-S", str(LAUNCHER), address])
        self.process = subprocess.Popen([sys.executable, str(STARTER), address], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, cwd=REPO, env=dict(env))
        self.forked: dict[str, Future] = {}
        self.ended: dict[str, Future] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._read_replies, daemon=True).start()

    def _read_replies(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            reply = json.loads(line)
            if "id" not in reply:  # a zygote or cell the maker forked has ended: its CPU time
                _count_cpu(reply["cpu_s"])
                continue
            with self.lock:
                waiting = (self.ended if "returncode" in reply else self.forked).pop(reply["id"])
            waiting.set_result(reply)
        with self.lock:  # the starter died: nobody waits forever
            for waiting in (*self.forked.values(), *self.ended.values()):
                waiting.set_exception(RuntimeError(f"the command starter ended with {self.process.poll()}"))
            self.forked.clear()
            self.ended.clear()

    def run(self, request: dict, timeout: float | None) -> tuple[int | None, float]:
        """(exit status, CPU seconds); (None, CPU seconds) when it ran past `timeout` and was killed."""
        forked, ended = Future(), Future()
        with self.lock:
            self.forked[request["id"]], self.ended[request["id"]] = forked, ended
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        pid = forked.result()["pid"]
        try:
            reply = ended.result(timeout=timeout)
        except FutureTimeout:  # not the builtin TimeoutError before Python 3.11
            os.kill(pid, signal.SIGKILL)
            return None, ended.result()["cpu_s"]
        return reply["returncode"], reply["cpu_s"]

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def _count_cpu(seconds: float) -> None:
    global _forked_cpu_s
    with _lock:
        _forked_cpu_s += seconds


def _starter_for(env: Mapping[str, str]) -> _Starter:
    """The running starter of this environment, or a new one (the oldest ends when there are too many)."""
    with _lock:
        key = _starter_key(env)
        starter = _starters.pop(key, None)
        if starter is None or starter.process.poll() is not None:
            if len(_starters) >= _MOST_STARTERS:
                _starters.pop(next(iter(_starters))).close()
            starter = _Starter(env)
        _starters[key] = starter
    return starter


def forked_pythons(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The two variables that make a run started as a real process (a test's own `subprocess`, nox) take its zygote
    and its process-isolation cells from the maker, as harness_command's runs do: for a test whose question is not
    how those processes start. An environment the maker was not started with still gets new
    Pythons (tests/zygote_maker.py)."""
    launcher = _starter_for(dict(os.environ if env is None else env)).launcher
    return {ZYGOTE_PYTHON_VARIABLE: launcher, CELL_PYTHON_VARIABLE: launcher}


def harness_command(args: Sequence[str], *, cwd: Path | str = REPO, env: Mapping[str, str] | None = None,
                    timeout: float | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m harness ARGS` as subprocess.run(..., capture_output=True, text=True) runs it: the same result, or
    subprocess.TimeoutExpired after killing it."""
    return module_command("harness", args, cwd=cwd, env=env, timeout=timeout, input=input)


def module_command(module: str, args: Sequence[str], *, cwd: Path | str = REPO, env: Mapping[str, str] | None = None,
                   timeout: float | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS`, forked: what harness_command does, for any module (the starter's tests use their own)."""
    env = dict(os.environ if env is None else env)
    command = [sys.executable, "-m", module, *args]
    starter = _starter_for(env)
    if module == "harness":
        env.setdefault(ZYGOTE_PYTHON_VARIABLE, starter.launcher)
        env.setdefault(CELL_PYTHON_VARIABLE, starter.launcher)
    folder = Path(tempfile.mkdtemp(prefix="tcm-command-"))
    try:
        stdin = None
        if input is not None:
            stdin = str(folder / "stdin")
            Path(stdin).write_text(input)
        request = {"id": str(next(_ids)), "module": module, "argv": list(args), "cwd": str(Path(cwd).resolve()), "env": env,
                   "stdin": stdin, "stdout": str(folder / "stdout"), "stderr": str(folder / "stderr")}
        returncode, cpu_s = starter.run(request, timeout)
        _count_cpu(cpu_s)
        stdout, stderr = ((folder / name).read_text(errors="replace") for name in ("stdout", "stderr"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if returncode is None:
        raise subprocess.TimeoutExpired(command, timeout or 0, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(command, returncode, stdout, stderr)


@atexit.register
def _close_starters() -> None:
    for starter in _starters.values():
        starter.close()
