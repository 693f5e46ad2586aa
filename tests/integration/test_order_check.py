"""`python -m harness order-check`: the same cells in two orders in one worker agree (the catalogue), and a
plug-in that leaves state behind in its worker is caught (exit 1, the cell named)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.order_check import order_differences, sample_kernels
from harness.run.environment import resolve_tier

REPO = Path(__file__).resolve().parents[2]
ORDER_SENSITIVE = REPO / "tests" / "integration" / "plugins" / "order_sensitive_kernels.py"


def _order_check(tmp_path: Path, *selection: str) -> subprocess.CompletedProcess[str]:
    command = ["order-check", *selection, "--tier", resolve_tier("auto"),
               "--out-dir", str(tmp_path)]
    return harness_command(command, timeout=900)


@pytest.mark.slow
def test_a_sample_of_the_catalogue_agrees_in_both_orders(tmp_path: Path) -> None:
    run = _order_check(tmp_path, "-k", "add,sin,storage_offset", "--sample", "2", "-s", "native,raw,custom_op",
                       "-p", "eager,compile_fullgraph")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "12 cells, 0 differ between the two orders" in run.stdout


@pytest.mark.slow
def test_state_left_in_the_worker_is_an_order_dependence(tmp_path: Path) -> None:
    run = _order_check(tmp_path, "--kernels-from", str(ORDER_SENSITIVE), "-k", "order_setter,order_victim",
                       "--sample", "0", "-s", "raw", "-p", "eager")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 differ between the two orders" in run.stdout
    assert "order_victim/raw/eager:" in run.stdout


def test_differences_name_each_cell_and_missing_results() -> None:
    first, second = {"a/raw/eager": "pass", "b/raw/eager": "fail"}, {"a/raw/eager": "wrong"}
    assert order_differences(first, second) == [
        "a/raw/eager: pass in order longest-first, wrong in order reversed",
        "b/raw/eager: fail in order longest-first, (no result) in order reversed"]
    assert order_differences(first, dict(first)) == []


def test_the_sample_is_drawn_by_the_seed_and_kept_in_name_order() -> None:
    names = ["e", "d", "c", "b", "a"]
    assert sample_kernels(names, 2, 7) == sample_kernels(names, 2, 7) == sorted(sample_kernels(names, 2, 7))
    assert sample_kernels(names, 0, 7) == sample_kernels(names, 9, 7) == ["a", "b", "c", "d", "e"]
