"""GPU pinning of xdist workers, with fake GPU lists (this machine has none), and end to end with a fake nvidia-smi."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

import harness.plugin.state
import harness.run.environment
from harness.plugin import xdist_hooks
from harness.results import read_results
from harness.run.gpus import GpuPins, pick_gpu, visible_gpus

REPO = Path(__file__).resolve().parents[2]


def test_every_gpu_when_the_user_set_none():
    assert visible_gpus({}, 4) == ["0", "1", "2", "3"]
    assert visible_gpus({}, 0) == []


def test_pinning_stays_within_the_users_cuda_visible_devices():
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}, 8) == ["2", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-aaaa, GPU-bbbb"}, 8) == ["GPU-aaaa", "GPU-bbbb"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}, 8) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}, 8) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "1,-1,2"}, 8) == ["1"]  # CUDA stops at the first invalid entry


def test_workers_are_spread_round_robin_over_the_gpus():
    pins = GpuPins(["0", "1"])
    assert [pins.assign(f"gw{i}") for i in range(5)] == ["0", "1", "0", "1", "0"]  # worker index modulo GPU count


def test_a_replacement_worker_takes_the_gpu_its_dead_worker_freed():
    pins = GpuPins(["0", "1"])
    for worker in ("gw0", "gw1", "gw2", "gw3"):
        pins.assign(worker)
    pins.release("gw1")  # died on GPU 1
    assert pins.assign("gw4") == "1"
    assert Counter(pins.held.values()) == {"0": 2, "1": 2}
    assert pins.given["gw1"] == "1"  # still known, for the record of the cell it died in


def test_no_gpus_no_pin():
    assert pick_gpu([], []) is None
    assert GpuPins([]).assign("gw0") is None


def _controller_config(tier: str = "auto") -> SimpleNamespace:
    return SimpleNamespace(stash=pytest.Stash(), args=[],  # no matrix suite asked (runs_matrix)
                           option=SimpleNamespace(matrix_tier=tier, matrix_resume=None, matrix_results="r.jsonl"))


@pytest.fixture
def no_loader_folder(monkeypatch, tmp_path):
    """The controller names each worker its run's loader-zygote folder, which it makes: here, under the test's own
    folder (under /tmp, every run of these tests left its folders behind)."""
    folder = tmp_path / "loader"
    monkeypatch.setattr(harness.plugin.state, "make_loader_dir", lambda: folder)
    return folder


def _node(config: SimpleNamespace, worker: str) -> SimpleNamespace:
    return SimpleNamespace(config=config, gateway=SimpleNamespace(id=worker), workerinput={})


def test_the_controller_pins_each_new_worker_from_nvidia_smis_list(monkeypatch, no_loader_folder):
    monkeypatch.setattr(harness.run.environment, "query_gpus", lambda: [{"name": "H200", "driver": "1"}] * 2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    config = _controller_config()
    nodes = [_node(config, f"gw{i}") for i in range(3)]
    for node in nodes:
        xdist_hooks.pytest_configure_node(node)
    assert [node.workerinput["tcm_gpu"] for node in nodes] == ["5", "7", "5"]
    assert {node.workerinput[xdist_hooks.LOADER][0] for node in nodes} == {str(no_loader_folder)}  # one per run
    on_gpu = _node(_controller_config("gpu"), "gw0")
    xdist_hooks.pytest_configure_node(on_gpu)
    assert on_gpu.workerinput["tcm_tier"] == "gpu", "a worker makes its CUDA context ahead on the GPU tier"
    assert on_gpu.workerinput["tcm_results"] == "r.jsonl", "where a worker finds a control another worker recorded"


def test_one_gpu_or_the_cpu_tier_pins_nothing(monkeypatch, no_loader_folder):
    monkeypatch.setattr(harness.run.environment, "query_gpus", lambda: [{"name": "H100", "driver": "1"}])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    node = _node(_controller_config(), "gw0")
    xdist_hooks.pytest_configure_node(node)
    assert node.workerinput["tcm_gpu"] is None
    monkeypatch.setattr(harness.run.environment, "query_gpus", lambda: [{"name": "H200", "driver": "1"}] * 2)
    node = _node(_controller_config("cpu"), "gw0")
    xdist_hooks.pytest_configure_node(node)
    assert node.workerinput["tcm_gpu"] is None


def test_a_worker_sets_cuda_visible_devices_at_configure(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    config = SimpleNamespace(workerinput={"tcm_gpu": "1", "workerid": "gw1"}, option=SimpleNamespace(matrix_isolation="process"))
    xdist_hooks.pytest_configure(config)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"


@pytest.mark.slow
def test_each_cell_records_the_gpu_its_worker_was_pinned_to(tmp_path):
    """Two workers, a fake nvidia-smi listing two GPUs: every cell records its worker's GPU (gw0: 0, gw1: 1)."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    smi = fake_bin / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'Fake GPU, 1.0'\necho 'Fake GPU, 1.0'\n")
    smi.chmod(0o755)
    output = tmp_path / "results.jsonl"
    env = {**os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    command = [sys.executable, "-m", "pytest", "matrix/test_eager.py", "-q", "-p", "no:cacheprovider", "-n", "2",
               "--matrix-tier", "auto", "--matrix-kernel", "add,sin", "--matrix-style", "native,raw",
               "--matrix-pipeline", "eager", "--matrix-results", str(output), "--matrix-baseline-dir", "none"]
    completed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    cells = read_results(output).cells
    assert len(cells) == 4
    by_worker = {cell.worker: cell.detail.get("gpu") for cell in cells}
    assert set(by_worker.values()) <= {"0", "1"} and None not in by_worker.values()
    assert by_worker.get("gw0") == "0" and by_worker.get("gw1", "1") == "1"


def test_the_controller_hands_each_worker_the_durations_it_read(monkeypatch, no_loader_folder):
    durations = {"add/native/eager": 1.5}
    monkeypatch.setattr(xdist_hooks, "runs_matrix", lambda config: True)
    reused = {"add/raw/eager": None, "add/native/eager": None}  # what --reuse copied: no worker runs them
    monkeypatch.setattr(xdist_hooks, "matrix_state", lambda config: SimpleNamespace(durations=durations, reused=reused))
    node = _node(_controller_config("cpu"), "gw0")
    xdist_hooks.pytest_configure_node(node)
    assert node.workerinput[xdist_hooks.DURATIONS] is durations
    assert node.workerinput[xdist_hooks.REUSED] == ["add/native/eager", "add/raw/eager"]
    outside = _node(_controller_config("cpu"), "gw1")
    monkeypatch.setattr(xdist_hooks, "runs_matrix", lambda config: False)  # the harness's own tests under xdist
    xdist_hooks.pytest_configure_node(outside)
    assert xdist_hooks.DURATIONS not in outside.workerinput
