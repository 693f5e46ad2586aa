"""Workers forked from the run's zygote (`--worker-start zygote`, harness.run.startup.zygote_python).

What must hold for a forked worker to stand in for xdist's own new Python: the code runs with the
caller's stdin, stdout, stderr, environment and folder; the caller leaves with the worker's exit status
(a signal as the same signal) and passes SIGTERM on; a worker whose caller is killed is ended; with no
zygote the caller becomes a plain Python and says so. The matrix-level check, at the end: the same
outcomes as `--worker-start spawn`, every worker with caches of its own, nothing left behind.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from zygote_helpers import (
    assert_no_zygote_left,
    cells_of,
    seed_kept_isa_probes,
    share_bytecode_cache,
    share_precompiled_headers,
    table_rows,
)

from harness.run.caches import CACHE_VARIABLES, ISA_PROBES
from harness.run.environment import resolve_tier, usable_cpu_count
from harness.run.run_folders import process_alive
from harness.run.startup import zygote_client, zygote_python

TIER = resolve_tier("auto")
REPO = Path(__file__).resolve().parents[2]
STAND_IN = [sys.executable, "-I", "-S", str(Path(zygote_python.__file__))]


@pytest.fixture(scope="module")
def zygote_dir():
    directory = zygote_client.make_loader_dir()
    _wait_for_warm_up(directory, zygote_client.ensure_started(directory, os.getpid(), TIER))
    yield directory
    zygote_client.stop(directory)


def _wait_for_warm_up(directory: Path, pid: int, limit_s: float = 300.0) -> None:
    """Every test here asks what a ready zygote does: one that died warming up would leave each of them a plain
    Python's answer and no word of why (seen once, in a fresh clone's suite), so each fails here with the zygote's
    log instead. The zygote is this process's child: waiting for it reaps it and gives its exit status."""
    deadline = time.monotonic() + limit_s
    while zygote_client.read_warmup(directory) is None:
        how = _ended(pid) or (f"was not ready after {limit_s:.0f} s" if time.monotonic() > deadline else None)
        if how:
            log = (directory / zygote_client.LOG).read_text(errors="replace")[-3000:]
            pytest.fail(f"the zygote {pid} {how} before its warm-up was done; its log:\n{log}", pytrace=False)
        time.sleep(0.05)


def _ended(pid: int) -> str | None:
    """How this process's child `pid` ended, reaping it; None while it runs."""
    try:
        ended, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped already: subprocess reaps an abandoned Popen when the next one starts
        return "ended"
    return f"ended with {os.waitstatus_to_exitcode(status)}" if ended else None


def _python(directory: Path, code: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*STAND_IN, str(directory), "-u", "-c", code], capture_output=True, text=True,
                          timeout=300, **kwargs)


def test_the_code_runs_with_the_callers_pipes_environment_and_folder(zygote_dir, tmp_path):
    code = ("import os, sys; line = sys.stdin.readline(); "
            "print(line.strip().upper(), os.getcwd(), os.environ['TCM_PROBE'], os.environ['TCM_WORKER_START']); "
            "print('to stderr', file=sys.stderr)")
    done = _python(zygote_dir, code, input="hello\n", cwd=tmp_path, env={**os.environ, "TCM_PROBE": "seen"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["HELLO", str(tmp_path), "seen", "zygote"]
    assert done.stderr.strip() == "to stderr"


def test_it_is_forked_from_the_zygote_with_torch_already_imported(zygote_dir):
    done = _python(zygote_dir, "import os, sys; print(os.getppid(), 'torch' in sys.modules)")
    assert done.stdout.split() == [(zygote_dir / zygote_client.PID_FILE).read_text().strip(), "True"]


def test_the_zygote_records_how_long_its_warm_up_took(zygote_dir):
    _python(zygote_dir, "pass")  # answered only after the warm-up
    warmup = zygote_client.read_warmup(zygote_dir)
    assert warmup is not None and warmup["warmup_s"] > 0 and warmup["ready_at"] <= time.time()
    assert zygote_client.read_warmup(zygote_dir.parent / "no-such-run") is None


@pytest.mark.parametrize(("code", "returncode"), [
    ("import sys; sys.exit(3)", 3),
    ("import sys; sys.exit('a message')", 1),
    ("import os; os._exit(7)", 7),
    ("raise ValueError('boom')", 1),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", -signal.SIGSEGV),
])
def test_the_caller_leaves_with_the_workers_exit_status(zygote_dir, code, returncode):
    done = _python(zygote_dir, code)
    assert done.returncode == returncode, done.stderr
    if "boom" in code:
        assert "ValueError: boom" in done.stderr
    if "a message" in code:
        assert done.stderr.strip() == "a message"


def test_atexit_runs_as_at_the_end_of_a_python(zygote_dir):
    done = _python(zygote_dir, "import atexit; atexit.register(print, 'atexit ran')")
    assert done.stdout.strip() == "atexit ran"


def _worker_pid_of(process: subprocess.Popen) -> int:
    line = process.stdout.readline()  # the worker prints its pid first
    return int(line)


def test_sigterm_to_the_caller_reaches_the_worker(zygote_dir):
    process = subprocess.Popen([*STAND_IN, str(zygote_dir), "-u", "-c", "import os, time; print(os.getpid()); time.sleep(120)"],
                               stdout=subprocess.PIPE, text=True)
    worker = _worker_pid_of(process)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == -signal.SIGTERM
    assert not process_alive(worker)


def test_a_worker_whose_caller_is_killed_is_ended(zygote_dir):
    process = subprocess.Popen([*STAND_IN, str(zygote_dir), "-u", "-c", "import os, time; print(os.getpid()); time.sleep(120)"],
                               stdout=subprocess.PIPE, text=True)
    worker = _worker_pid_of(process)
    process.kill()  # SIGKILL: nothing is passed on; the zygote sees the connection close
    process.wait()
    deadline = time.monotonic() + 30
    while process_alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not process_alive(worker)


def test_with_no_zygote_the_caller_becomes_a_new_python_and_says_so(tmp_path):
    done = _python(tmp_path / "no-zygote-here", "import os, sys; print(os.environ['TCM_WORKER_START'], 'torch' in sys.modules)")
    assert done.returncode == 0
    assert done.stdout.split() == ["spawn", "False"]
    assert "no zygote" in done.stderr and "starting a new Python instead" in done.stderr


def test_a_zygote_that_exits_without_answering_leaves_the_caller_a_new_python(tmp_path):
    """Seen with a CUDA build of torch on a machine with no GPU: the zygote's warm-up marks CUDA started, so it
    refuses to fork and exits with the request unread; the caller's read is then a reset, not an empty line."""
    import socket
    import threading

    tmp_path.mkdir(exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(tmp_path / zygote_python.SOCKET))
    server.listen(1)

    def exit_unread() -> None:
        connection, _ = server.accept()
        connection.recv(1)  # the request's first byte, then nothing more: the rest stays unread
        connection.close()

    threading.Thread(target=exit_unread, daemon=True).start()
    done = _python(tmp_path, "import os; print(os.environ['TCM_WORKER_START'])")
    server.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["spawn"]
    assert "the zygote closed without starting a worker" in done.stderr


def test_arguments_other_than_execnets_start_a_new_python(tmp_path):
    done = subprocess.run([*STAND_IN, str(tmp_path), "-c", "print(1)", "extra"], capture_output=True, text=True, timeout=60)
    assert "are not `-u -c CODE`" in done.stderr


@pytest.mark.slow
def test_zygote_workers_give_process_isolations_outcomes_with_caches_of_their_own_and_leave_nothing_behind(tmp_path):
    """One real `harness bench` of both mechanisms, two workers each: it also stands for the bench command's own
    end-to-end check (each run's results and the table's row; the table's arithmetic is in test_bench.py)."""
    own_tmp = Path(tempfile.mkdtemp(prefix="tw-"))  # short: the zygote's socket path must fit AF_UNIX's limit
    seed_kept_isa_probes(own_tmp)
    share_precompiled_headers(own_tmp)
    share_bytecode_cache(own_tmp)
    # Cache folders named in the environment, as in any process that imported Inductor (it writes its default
    # folder there): the workers must not share them, each keeps its own (an empty JSON in a package, CI).
    inherited = {variable: own_tmp / f"inherited-{name}" for variable, name in CACHE_VARIABLES}
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("OMP_NUM_THREADS", "TCM_KEEP_CACHES")}  # its own share; the default caches
    environment.update({variable: str(folder) for variable, folder in inherited.items()})
    # One kernel: the question is the two ways workers start, not the kernels. Two groups (eager, compile) keep both
    # workers busy. With `sin` too, the test took 86 CPU seconds alone, 61 without (its pytest's own start included).
    asked = sorted(f"add/{s}/{p}" for s in ("native", "custom_op") for p in ("eager", "compile"))
    outcomes = {}
    try:
        # worker isolation forks its workers from the zygote; process isolation's workers are xdist's new Pythons
        table = tmp_path / "table.md"
        completed = subprocess.run(
            [sys.executable, "-m", "harness", "bench", "-k", "add", "-s", "native", "-s", "custom_op",
             "-p", "eager", "-p", "compile", "--modes", "worker,process", "--workers", "2",
             "--out-dir", str(tmp_path / "runs"), "-o", str(table)],
            cwd=REPO, capture_output=True, text=True, timeout=1200, env={**environment, "TMPDIR": str(own_tmp)})
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
        exits = re.findall(r"cells, exit (-?\d+)", completed.stdout)  # each run's own exit status, as bench prints it
        assert len(exits) == 2 and set(exits) <= {"0", "1"}, completed.stdout[-3000:]
        for isolation, start in (("worker", "zygote"), ("process", "spawn")):
            results = tmp_path / "runs" / f"{isolation}-n2.jsonl"
            header = json.loads(results.read_text().splitlines()[0])
            assert header["worker_start"] == start and header["isolation"] == isolation
            cells = cells_of(results)
            assert sorted(cells) == asked
            # the header knows when the run started (before any cell) and, with a zygote, its serial warm-up
            if start == "zygote":  # cells run in the workers, which record when each started
                assert header["started_at"] < min(r["detail"]["started_at"] for r in cells.values())
            assert (header["zygote_warmup_s"] > 0) if start == "zygote" else header["zygote_warmup_s"] is None
            assert {r["detail"].get("worker_start") for r in cells.values()} == {start}
            # two workers share the cores, and torch in each worker (forked or new) took its share
            share = max(1, (usable_cpu_count() or 1) // 2)
            assert header["environment"]["omp_num_threads"] == str(share)
            assert {r["detail"].get("cpu_threads") for r in cells.values()} == {share}
            outcomes[start] = {cell: (r["outcome"], r["stage"], r["error_type"]) for cell, r in cells.items()}
        assert outcomes["zygote"] == outcomes["spawn"]
        rows = table_rows(table.read_text())
        assert rows[("worker", "2")][2] == str(len(asked)) and rows[("worker", "2")][7] == "identical"
        assert float(rows[("process", "2")][3]) > 0 and float(rows[("process", "2")][4]) > 0
        written = [str(path) for folder in inherited.values() if folder.exists() for path in folder.rglob("*")]
        assert not written, f"workers wrote to the inherited cache folders: {written[:5]}"
        caches = own_tmp / f"tcm-caches-{os.getuid()}"  # each run's folder of per-worker caches goes with the run
        kept = {"pycache", ISA_PROBES}  # kept from run to run by design: bytecode, and the ISA probe's outputs
        left = sorted(path.name for path in caches.iterdir() if path.name not in kept)
        assert not left, f"cache folders left behind: {left}"
        assert_no_zygote_left(own_tmp)
    finally:
        shutil.rmtree(own_tmp, ignore_errors=True)


def test_the_controller_names_the_stand_in_as_each_workers_python_and_falls_back_when_no_zygote_starts(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from harness.plugin import xdist_hooks

    monkeypatch.setattr(xdist_hooks, "loader_dir", lambda config: tmp_path)
    option = SimpleNamespace(matrix_tier="cpu", matrix_worker_start="zygote", tx=["popen", "popen"])
    config = SimpleNamespace(option=option, stash=pytest.Stash())  # the run's tier is resolved once, in the stash
    monkeypatch.setattr(xdist_hooks, "ensure_started", lambda directory, owner, tier: 1)
    xdist_hooks._start_workers_from_zygote(config)
    assert len(option.tx) == 2 and all(spec.startswith("popen//python=") and "zygote_python.py" in spec
                                       and str(tmp_path) in spec for spec in option.tx)

    def cannot_start(directory, owner, tier):
        raise zygote_client.ZygoteUnavailable("the loader zygote did not start (exit 1): boom")

    option.tx = ["popen"]
    monkeypatch.setattr(xdist_hooks, "ensure_started", cannot_start)
    xdist_hooks._start_workers_from_zygote(config)
    assert option.tx == ["popen"] and option.matrix_worker_start == "spawn"


def test_a_malformed_request_is_dropped_and_the_zygote_goes_on(zygote_dir):
    import socket

    for garbage in (b"W{not json\n", b"W" + b'{"code": "print(1)"}\n'):  # the second carries no descriptors
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(str(zygote_dir / zygote_client.SOCKET))
            connection.sendall(garbage)
            connection.settimeout(30)
            assert connection.recv(100) == b""  # closed without an answer
    done = _python(zygote_dir, "print('still serving')")
    assert done.stdout.strip() == "still serving"
