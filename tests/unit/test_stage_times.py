"""detail.stage_s: each second of a cell counted once, in the stage that owns it."""

import time

import pytest

from harness.domain.pipelines.common import CellContext, StageFailure, stage_clock, staged


def context() -> CellContext:
    return CellContext(spec=None, built=None, device=None, tier="cpu", workdir=None)  # only the clock is used


def test_a_stage_inside_another_is_part_of_the_outer_one() -> None:
    cell = context()
    with staged("run", cell):
        time.sleep(0.02)
        with staged("check", cell):
            time.sleep(0.02)
    assert set(cell.stage_seconds) == {"run"} and cell.stage_seconds["run"] >= 0.04
    assert cell.stage_depth == 0


def test_a_failure_charges_its_time_to_the_stage_it_names() -> None:
    cell = context()
    with pytest.raises(StageFailure) as caught:
        with staged("run", cell):
            with stage_clock(cell, "compile"):
                time.sleep(0.02)
                raise StageFailure("trace", ValueError("graph break"))
    assert caught.value.stage == "trace"
    assert set(cell.stage_seconds) == {"trace"} and cell.stage_seconds["trace"] >= 0.02


def test_stages_one_after_another_add_up() -> None:
    cell = context()
    for _ in range(2):
        with staged("run", cell):
            time.sleep(0.01)
    with pytest.raises(StageFailure):
        with staged("check", cell):
            raise AssertionError("mismatch")
    assert cell.stage_seconds["run"] >= 0.02 and "check" in cell.stage_seconds
