"""The loader zygote (harness.run.startup.loader_zygote): one warm process per run forks each aoti_fresh_process loader.

What must hold for it to replace a new Python per load: every request gets its own process and an
answer with its exit status (a signal as a negative code, a hang killed at its limit), the loader
never sees a kernel module even when the caller imported them all, one zygote serves many callers at
once, and it leaves when the run that owns it is gone. The matrix-level check (the same outcomes as
a new Python per load) is the last test.
"""

import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from zygote_helpers import assert_no_zygote_left, cells_of, seed_kept_isa_probes, share_bytecode_cache, share_precompiled_headers

import kernels  # noqa: F401  (the caller has imported the kernels; the loader must not see them)
from harness.domain.pipelines.aoti_loader import read_report
from harness.run.environment import resolve_tier
from harness.run.run_folders import process_alive
from harness.run.startup import ready_loaders, zygote_client

TIER = resolve_tier("auto")
AOTI_LOADER = "harness.domain.pipelines.aoti_loader"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def zygote_dir():
    directory = zygote_client.make_loader_dir()
    yield directory
    zygote_client.stop(directory)


def _load(directory: Path, tmp_path: Path, package: Path, timeout_s: float = 120.0, name: str = "one"):
    paths = [tmp_path / f"{name}-{suffix}" for suffix in ("inputs.pt", "outputs.pt", "report.json")]
    run = zygote_client.run_loader(directory, os.getpid(), TIER, AOTI_LOADER, [str(package), *map(str, paths)], dict(os.environ),
                                   timeout_s, tmp_path / f"{name}.log")
    return run, read_report(paths[2])


def test_a_loader_that_fails_reports_its_error_and_exit_status_and_never_saw_a_kernel_module(zygote_dir, tmp_path):
    run, report = _load(zygote_dir, tmp_path, tmp_path / "no-such.pt2")
    assert (run.returncode, run.timed_out) == (1, False)
    assert report["status"] == "error" and report["stage"] == "load" and report["error_type"]
    assert report["kernel_modules"] == []
    assert "kernels" in sys.modules


def test_a_hanging_loader_is_killed_at_its_limit_and_said_to_have_timed_out(zygote_dir, tmp_path):
    fifo = tmp_path / "never-written.pt2"
    os.mkfifo(fifo)  # opening it for reading blocks until a writer comes: none does
    started = time.monotonic()
    run, report = _load(zygote_dir, tmp_path, fifo, timeout_s=3.0)
    assert run.timed_out and run.returncode == -9
    assert report["status"] == "started" and report["stage"] == "load"
    assert time.monotonic() - started < 60


def test_one_zygote_answers_many_callers_at_once_each_in_a_process_of_its_own(zygote_dir, tmp_path):
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda i: _load(zygote_dir, tmp_path, tmp_path / "missing.pt2", name=str(i)), range(6)))
    assert {run.zygote_pid for run, _ in answers} == {int((zygote_dir / zygote_client.PID_FILE).read_text())}
    assert all(run.returncode == 1 and report["status"] == "error" for run, report in answers)


def test_the_zygote_leaves_when_its_owner_is_gone(tmp_path):
    directory = zygote_client.make_loader_dir()
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        pid = zygote_client.ensure_started(directory, owner.pid, TIER)
        assert process_alive(pid)
        owner.kill()
        owner.wait()
        deadline = time.monotonic() + 120  # it finishes its warm-up (import torch) first
        while process_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
            try:
                os.waitpid(pid, os.WNOHANG)  # it is this test's child: reap it, or it lingers as a zombie
            except ChildProcessError:
                break
        assert not process_alive(pid)
        assert not directory.exists(), "a zygote whose run was killed removes the run's folder itself"
    finally:
        zygote_client.stop(directory)


def test_a_killed_zygote_is_started_again_by_the_next_request(tmp_path):
    directory = zygote_client.make_loader_dir()
    try:
        first = zygote_client.ensure_started(directory, os.getpid(), TIER)
        os.kill(first, signal.SIGKILL)  # no chance to remove its socket
        os.waitpid(first, 0)
        run, report = _load(directory, tmp_path, tmp_path / "missing.pt2")
        assert run.zygote_pid != first
        assert run.returncode == 1 and report["status"] == "error"
    finally:
        zygote_client.stop(directory)


def test_a_zygote_that_cannot_start_is_one_clear_error(tmp_path):
    directory = tmp_path / "a" / ("x" * 120)  # past AF_UNIX's path limit: it cannot bind its socket
    directory.mkdir(parents=True)
    with pytest.raises(zygote_client.ZygoteUnavailable, match="did not start"):
        zygote_client.ensure_started(directory, os.getpid(), TIER)


def _zygote_processes(directory: Path) -> list[str]:
    """The zygote of `directory` and every child of its still alive (forked children keep the zygote's command line)."""
    found = subprocess.run(["pgrep", "-f", f"harness.run.startup.loader_zygote {directory}"], capture_output=True, text=True)
    return found.stdout.split()


def _wait_until(predicate, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.1)
    return predicate()


def test_loaders_forked_ahead_serve_their_cuda_environment_once_each_and_leave_with_the_zygote(monkeypatch, tmp_path):
    monkeypatch.setenv(ready_loaders.READY_VARIABLE, "2")  # the CPU tier keeps none by default
    directory = zygote_client.make_loader_dir()
    try:
        zygote = zygote_client.ensure_started(directory, os.getpid(), TIER)
        first, _ = _load(directory, tmp_path, tmp_path / "missing.pt2", name="first")
        assert not first.forked_ahead  # the first request of an environment is what loaders are forked ahead for
        assert _wait_until(lambda: len(_zygote_processes(directory)) == 3), "two loaders forked ahead, and the zygote"
        answers = [_load(directory, tmp_path, tmp_path / "missing.pt2", name=f"ahead-{i}") for i in range(3)]
        assert all(run.forked_ahead for run, _ in answers[:2])
        assert all(run.returncode == 1 and report["status"] == "error" for run, report in answers)
        assert all(report["kernel_modules"] == [] for _, report in answers), "as fresh as a loader forked at its request"
        assert len({run.pid for run, _ in answers}) == 3, "each loader serves one request"
        other = dict(os.environ, CUDA_TCM_OTHER="1")  # another CUDA environment: none is ready for it
        paths = [tmp_path / f"other-{suffix}" for suffix in ("inputs.pt", "outputs.pt", "report.json")]
        run = zygote_client.run_loader(directory, os.getpid(), TIER, AOTI_LOADER,
                                       [str(tmp_path / "missing.pt2"), *map(str, paths)], other, 60.0,
                                       tmp_path / "other.log")
        assert not run.forked_ahead and run.returncode == 1
        assert _wait_until(lambda: len(_zygote_processes(directory)) == 5), "two more, for the other environment"
    finally:
        zygote_client.stop(directory)
    assert _zygote_processes(directory) == [], "no loader forked ahead outlives its zygote"
    assert not process_alive(zygote)


def test_a_loader_forked_ahead_that_hangs_is_killed_at_its_limit_counted_from_its_request(monkeypatch, tmp_path):
    monkeypatch.setenv(ready_loaders.READY_VARIABLE, "1")
    directory = zygote_client.make_loader_dir()
    try:
        zygote_client.ensure_started(directory, os.getpid(), TIER)
        _load(directory, tmp_path, tmp_path / "missing.pt2", name="seed")
        assert _wait_until(lambda: len(_zygote_processes(directory)) == 2)
        time.sleep(3)  # waiting ahead must not count against the request's limit
        fifo = tmp_path / "never-written.pt2"
        os.mkfifo(fifo)
        started = time.monotonic()
        run, report = _load(directory, tmp_path, fifo, timeout_s=2.0, name="hang")
        assert run.forked_ahead and run.timed_out and run.returncode == -9
        assert report["status"] == "started" and report["stage"] == "load"
        assert time.monotonic() - started >= 2.0
    finally:
        zygote_client.stop(directory)
    assert _zygote_processes(directory) == []


@pytest.mark.slow
def test_zygote_and_spawn_loaders_give_the_same_outcomes_and_leave_nothing_behind(tmp_path):
    outcomes = {}
    own_tmp = Path(tempfile.mkdtemp(prefix="tz-"))  # short: the zygote's socket path must fit AF_UNIX's limit
    seed_kept_isa_probes(own_tmp, own_tmp / "inductor")  # the new Python's cache below
    share_precompiled_headers(own_tmp)
    share_bytecode_cache(own_tmp)
    # a zygote inherited from an enclosing run (here a dead one) is used by neither loader
    stale = {zygote_client.LOADER_DIR_VARIABLE: str(own_tmp / "gone"), zygote_client.LOADER_OWNER_VARIABLE: "1"}
    caches = {"TORCHINDUCTOR_CACHE_DIR": str(own_tmp / "inductor"), "TRITON_CACHE_DIR": str(own_tmp / "triton")}
    environment = {**os.environ, "TMPDIR": str(own_tmp), **stale, **caches}
    try:
        results = tmp_path / "zygote.jsonl"  # a run: its loaders are forked from the run's zygote
        completed = subprocess.run(
            [sys.executable, "-m", "harness", "run", "-k", "add", "-s", "native",
             "-p", "aoti_fresh_process", "-n", "2", "-o", str(results)],
            cwd=REPO, capture_output=True, text=True, timeout=900, env=environment)
        assert completed.returncode in (0, 1), completed.stderr[-2000:]
        cells = cells_of(results)
        assert len(cells) == 1
        outcomes["zygote"] = {cell: (r["outcome"], r["stage"], r["error_type"]) for cell, r in cells.items()}
        passing = [r for r in cells.values() if r["outcome"] == "pass"]
        assert passing and all(r["detail"]["loader"] == "zygote" for r in passing)
        assert all(r["detail"]["loader_modules_with_kernels"] == [] for r in passing)
        # the same cell outside any run (a new Python per load, as a stale zygote is not the run's)
        script = ("import json, sys; from harness.run.environment import enter_tier; enter_tier(sys.argv[1]); "
                  "from harness.run.cell import CellRequest; from harness.run.isolation import run_inline; "
                  "r = run_inline(CellRequest('add', 'native', 'aoti_fresh_process', sys.argv[1])); "
                  "print(json.dumps([r.id, r.outcome, r.stage, r.error_type, r.detail.get('loader')]))")
        alone = {key: value for key, value in environment.items() if key not in stale}  # no run, no zygote
        inline = subprocess.run([sys.executable, "-c", script, TIER], cwd=REPO, capture_output=True, text=True,
                                timeout=900, env=alone)
        cell, outcome, stage, error_type, loader = json.loads(inline.stdout.strip().splitlines()[-1])
        outcomes["spawn"] = {cell: (outcome, stage, error_type)}
        assert loader == "spawn" or outcome != "pass"
        assert outcomes["zygote"] == outcomes["spawn"]
        assert_no_zygote_left(own_tmp)
    finally:
        shutil.rmtree(own_tmp, ignore_errors=True)


def test_a_test_run_that_runs_no_matrix_cell_is_pointed_at_no_zygote():
    """This suite runs under xdist (nox -s tests): its workers must not inherit a run's zygote, only matrix workers do."""
    assert zygote_client.LOADER_DIR_VARIABLE not in os.environ


WARM_UP_CHECK = """
import json, sys, threading
from harness.run.startup import zygote_warmup
zygote_warmup.warm_up(sys.argv[1])
from torch._inductor.cpu_vec_isa import pick_vec_isa, valid_vec_isa_list
print(json.dumps({"picked": str(pick_vec_isa()), "valid": [str(isa) for isa in valid_vec_isa_list()],
                  "asked_ahead": [str(isa) for isa in zygote_warmup._vec_isa_candidates()],
                  "threads": threading.active_count(),
                  "imported": [name for name in ("torch._inductor.compile_fx", "harness.domain.pipelines")
                               if name in sys.modules],
                  "kernel_modules": [name for name in sys.modules if name == "kernels" or name.startswith("kernels.")]}))
"""
ALONE = "from torch._inductor.cpu_vec_isa import pick_vec_isa; print(pick_vec_isa())"


@pytest.mark.slow
def test_the_warm_up_picks_inductors_own_isa_imports_inductor_and_no_kernel_and_leaves_no_thread(tmp_path):
    """The ISA candidates are probed in threads, each in an empty Inductor cache: the answer must be the one a
    plain Python gets probing one after another, every ISA Inductor finds valid must have been asked ahead, and
    no probing thread may be left when the zygote forks."""
    answers = []
    for code, args in ((WARM_UP_CHECK, [TIER]), (ALONE, [])):
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / f"inductor-{len(answers)}")}
        completed = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True,
                                   timeout=600, env=env)
        assert completed.returncode == 0, completed.stderr[-2000:]
        answers.append(completed.stdout.strip().splitlines()[-1])
    warmed = json.loads(answers[0])
    assert warmed["picked"] == answers[1]
    assert set(warmed["valid"]) <= set(warmed["asked_ahead"])
    assert warmed["threads"] == 1
    assert warmed["imported"] == ["torch._inductor.compile_fx", "harness.domain.pipelines"]
    assert warmed["kernel_modules"] == []
