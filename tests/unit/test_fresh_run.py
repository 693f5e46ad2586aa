"""`fresh_timeline`: where a fresh process's time went, from the cell's clock and the child's own."""

from __future__ import annotations

from harness.domain.fresh_run import FreshRun, fresh_timeline, main_clock


def test_the_fresh_process_time_is_split_around_its_main():
    fresh = FreshRun(0, "", "zygote", asked_at=100.0, answered_at=104.5, reaped_at=104.25)
    assert fresh_timeline(fresh, main_clock(101.5, 104.0)) == {
        "before_main_s": 1.5, "in_main_s": 2.5, "after_main_s": 0.5, "exit_s": 0.25}


def test_a_process_made_without_the_zygote_has_no_exit_time():
    fresh = FreshRun(0, "", "spawn", asked_at=100.0, answered_at=103.0)
    assert fresh_timeline(fresh, main_clock(102.0, 102.5)) == {
        "before_main_s": 2.0, "in_main_s": 0.5, "after_main_s": 0.5}


def test_a_child_that_wrote_no_clock_gives_no_timeline():
    fresh = FreshRun(-11, "", "zygote", asked_at=100.0, answered_at=101.0, reaped_at=101.0)
    assert fresh_timeline(fresh, None) == {}
    assert fresh_timeline(fresh, {"main_started": 100.5}) == {}, "it died inside main"
    assert fresh_timeline(FreshRun(0, "", "spawn"), main_clock(1.0, 2.0)) == {}, "the cell did not say when it asked"
