"""How many workers a run starts: `-n auto` asks the machine, then the selection; an explicit `-n` is kept."""

from __future__ import annotations

import pytest

from harness.cli import _plan_run, build_parser
from harness.run.workers import CPU_WORKER_GIB, GPU_WORKER_GIB, auto_worker_count, workers_for_groups


def test_auto_is_one_worker_per_core_capped_by_host_memory():
    assert auto_worker_count("cpu", cores=16, host_gib=1000.0) == 16
    assert auto_worker_count("cpu", cores=16, host_gib=4 * CPU_WORKER_GIB) == 4
    assert auto_worker_count("cpu", cores=2, host_gib=0.5) == 1  # never none


def test_on_the_gpu_tier_auto_is_capped_by_the_gpus_memory_too():
    assert auto_worker_count("gpu", cores=16, host_gib=1000.0, gpus_gib=[80.0]) == 16
    assert auto_worker_count("gpu", cores=16, host_gib=1000.0, gpus_gib=[2 * GPU_WORKER_GIB]) == 2
    assert auto_worker_count("cpu", cores=16, host_gib=1000.0, gpus_gib=[2 * GPU_WORKER_GIB]) == 16


@pytest.mark.parametrize("count, groups, expected", [(16, 1, 1), (16, 40, 16), (2, 2, 2), (4, 0, 1)])
def test_auto_starts_no_worker_that_would_have_no_group(count, groups, expected):
    assert workers_for_groups(count, groups) == expected


def _planned_workers(*argv: str) -> tuple[int, int]:
    args = build_parser().parse_args(["run", "--tier", "cpu", *argv])
    plan, _, workers = _plan_run(args)
    return workers, len({cell.group for cell in plan.to_run})


def test_a_run_asks_auto_for_its_groups_and_keeps_an_explicit_count(monkeypatch):
    monkeypatch.setattr("harness.cli.resolve_worker_count", lambda requested, tier: 8 if requested == "auto" else int(requested))
    assert _planned_workers("-k", "add", "-p", "eager") == (1, 1)  # every style of one kernel and pipeline: one group
    assert _planned_workers("-k", "add,sin", "-p", "eager,compile") == (4, 4)
    assert _planned_workers("-k", "add", "-p", "eager", "-n", "3") == (3, 1)
