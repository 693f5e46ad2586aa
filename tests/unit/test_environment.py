"""The environment a results header records: the cores a run may use, and the GPUs CUDA may see."""

import json
import os
import subprocess
import sys

import pytest

CODE = "import json; from harness.run.environment import describe; print(json.dumps(describe('cpu')))"


def describe_in_a_new_python(extra_env: dict, **run_options) -> dict:
    """The header's environment as a fresh Python sees it, with `extra_env` on top of this one's."""
    completed = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120,
                               env={**os.environ, **extra_env}, **run_options)
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity (Linux)")
def test_cpu_count_is_the_cores_the_run_may_use_not_the_machines():
    one_core = sorted(os.sched_getaffinity(0))[:1]
    environment = describe_in_a_new_python({"CUDA_VISIBLE_DEVICES": "0"},
                                           preexec_fn=lambda: os.sched_setaffinity(0, one_core))
    assert environment["cpu_count"] == 1
    assert environment["cuda_visible_devices"] == "0"


@pytest.mark.parametrize(("cores", "workers", "threads"), [
    (32, 32, "1"), (16, 4, "4"), (3, 2, "1"), (2, 3, "1"), (16, 1, None), (16, 0, None),
])
def test_workers_share_the_cores_for_torchs_cpu_threads(monkeypatch, cores, workers, threads):
    from harness.run import environment

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(environment, "usable_cpu_count", lambda: cores)
    assert environment.share_cores(workers) == threads
    assert os.environ.get("OMP_NUM_THREADS") == threads


def test_a_thread_count_the_user_set_is_kept(monkeypatch):
    from harness.run import environment

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.setattr(environment, "usable_cpu_count", lambda: 32)
    assert environment.share_cores(32) == "7"
    assert describe_in_a_new_python({"OMP_NUM_THREADS": "7"})["omp_num_threads"] == "7"


@pytest.mark.parametrize(("dist", "tx", "workers"), [("loadgroup", ["popen"] * 3, 3), ("no", ["popen"] * 3, 0),
                                                      ("load", None, 0)])
def test_the_controller_counts_the_workers_xdist_will_start(dist, tx, workers):
    from types import SimpleNamespace

    from harness.plugin.xdist_hooks import _worker_count

    assert _worker_count(SimpleNamespace(option=SimpleNamespace(dist=dist, tx=tx))) == workers


def test_a_fresh_process_gets_one_cuda_work_queue_on_the_gpu_tier_unless_the_user_set_how_many(monkeypatch):
    from harness.run.environment import describe, fresh_process_environment

    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    monkeypatch.setenv("TCM_SOME_VARIABLE", "kept")
    assert fresh_process_environment("gpu")["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"
    assert fresh_process_environment("gpu")["TCM_SOME_VARIABLE"] == "kept"
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in fresh_process_environment("cpu")
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in os.environ, "the worker's own environment is not changed"
    assert describe("gpu")["fresh_process_cuda_connections"] == "1"
    assert "fresh_process_cuda_connections" not in describe("cpu")
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8")
    assert fresh_process_environment("gpu")["CUDA_DEVICE_MAX_CONNECTIONS"] == "8"
    assert describe("gpu")["fresh_process_cuda_connections"] == "8"


@pytest.mark.parametrize(("tier", "queues"), [("gpu", "1"), ("cpu", "unset")])
def test_the_fresh_python_a_cell_starts_gets_that_environment(monkeypatch, tmp_path, tier, queues):
    from harness.run.startup.fresh_python import run_fresh_python
    from harness.run.startup.zygote_client import LOADER_DIR_VARIABLE

    (tmp_path / "print_queues.py").write_text(
        "import os\nprint(os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS', 'unset'))\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    monkeypatch.delenv(LOADER_DIR_VARIABLE, raising=False)  # no zygote: a new Python, given the same environment
    fresh = run_fresh_python("print_queues", [], tmp_path / "log", 60, tier)
    assert (fresh.returncode, fresh.output.strip(), fresh.how) == (0, queues, "spawn")


def test_the_tier_is_told_without_importing_torch():
    """`harness run` asks it before its zygote starts, ahead of the kernels (harness.run.startup.zygote_ahead)."""
    code = ("import sys; from harness.run.environment import resolve_tier, torch_cuda_version; "
            "found = (torch_cuda_version(), resolve_tier('auto')); imported = 'torch' in sys.modules; "
            "import torch; print(found == (torch.version.cuda, resolve_tier('auto')), imported)")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.stdout.split() == ["True", "False"], completed.stderr
