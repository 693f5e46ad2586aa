"""The time left of a run, weighed by earlier durations (harness.time_left)."""

from __future__ import annotations

import pytest

from harness.time_left import TimeLeft

LONG_FIRST = {"long": 100.0, **{f"short{i}": 1.0 for i in range(10)}}  # one long cell, then ten short ones


def test_a_long_cell_done_first_leaves_little_where_a_count_would_leave_most():
    left = TimeLeft(LONG_FIRST, LONG_FIRST)
    left.started("long", 0.0)
    left.finished("long", 100.0)
    assert left.seconds(100.0) == pytest.approx(10.0), "100 of 110 s of work in 100 s: 10 s left (by count: 1,000 s)"


def test_a_running_cell_counts_for_the_seconds_it_ran_up_to_its_weight():
    left = TimeLeft(LONG_FIRST, LONG_FIRST)
    left.started("long", 0.0)
    assert left.seconds(50.0) == pytest.approx(60.0), "50 of 110 s done in 50 s"
    assert left.seconds(200.0) == pytest.approx(20.0), "a cell past its weight counts for its weight, 100 of 110 s"


def test_the_clock_starts_at_the_first_cell():
    left = TimeLeft(LONG_FIRST, LONG_FIRST)
    assert left.seconds(5.0) is None, "nothing started: no estimate"
    left.started("long", 20.0)  # a warm-up of 20 s before it
    left.finished("long", 120.0)
    assert left.seconds(120.0) == pytest.approx(10.0)


def test_without_earlier_durations_it_is_by_count_and_running_cells_count_for_nothing():
    left = TimeLeft(["a", "b", "c", "d"], None)
    left.started("a", 0.0)
    assert left.seconds(10.0) is None, "by count, nothing is done until a cell ends"
    left.finished("a", 10.0)
    left.started("b", 10.0)
    assert left.seconds(20.0) == pytest.approx(60.0), "one of four cells in 20 s: 60 s for the other three"


def test_a_cell_the_earlier_results_lack_weighs_the_mean_of_its_pipeline_there():
    earlier = {"a/raw/aoti": 10.0, "b/raw/aoti": 30.0, "a/raw/eager": 1.0}
    left = TimeLeft(["lib/raw/aoti", "lib/raw/eager"], earlier)
    left.started("lib/raw/eager", 0.0)
    left.finished("lib/raw/eager", 1.0)
    assert left.seconds(1.0) == pytest.approx(20.0), "an AOTInductor cell weighs 20 s, an eager one 1 s (by count: 1 s)"
    elsewhere = TimeLeft(["lib/raw/vmap", "a/raw/eager"], earlier)
    elsewhere.started("a/raw/eager", 0.0)
    elsewhere.finished("a/raw/eager", 1.0)
    assert elsewhere.seconds(1.0) == pytest.approx(41 / 3), "a pipeline they never ran weighs the mean of all"


def test_a_cell_counts_once_and_cells_not_planned_count_for_nothing():
    left = TimeLeft(["a", "b"], {"a": 1.0, "b": 1.0})
    left.started("a", 0.0)
    left.finished("a", 2.0)
    left.finished("a", 3.0)
    left.finished("unplanned", 3.0)
    assert left.seconds(4.0) == pytest.approx(4.0), "half the work in 4 s"


def test_planned_cells_that_weigh_nothing_give_no_estimate():
    left = TimeLeft(["a", "b"], {"a": 0.0, "b": 0.0})
    left.started("a", 0.0)
    left.finished("a", 1.0)
    assert left.seconds(1.0) is None
