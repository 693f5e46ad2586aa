"""Which group the scheduler hands out next (harness.plugin.xdist_scheduler.group_to_hand_out).

Each round-trip cell makes a CUDA context in a fresh process, and the driver makes them one at a time: the
scheduler meters them, a few at a time from the run's start, and keeps the collection's (longest-first) order
for the rest (docs/maintainers.md, "Ordering").
"""

from __future__ import annotations

from harness.plugin.xdist_scheduler import group_to_hand_out
from harness.run.selection import Cell, context_bound

ROUND_TRIPS = [Cell(kernel, "native", "export_roundtrip").group for kernel in ("add", "sin", "atomics", "softmax")]
OTHERS = [Cell("add", "native", "compile").group, Cell("add", "native", "aoti_fresh_process").group]


def test_only_the_round_trip_family_is_context_bound() -> None:
    assert all(map(context_bound, ROUND_TRIPS))
    assert context_bound(Cell("add", "raw", "export_roundtrip_bare").group)
    assert not any(map(context_bound, OTHERS))


def test_while_few_round_trips_run_the_first_queued_one_goes_out_wherever_it_stands() -> None:
    assert group_to_hand_out([OTHERS[0], OTHERS[1], ROUND_TRIPS[2]], ROUND_TRIPS[:1], at_once=2) == ROUND_TRIPS[2]
    assert group_to_hand_out([ROUND_TRIPS[3], ROUND_TRIPS[2]], [], at_once=2) == ROUND_TRIPS[3]


def test_while_enough_round_trips_run_the_first_other_group_goes_out() -> None:
    queue = [ROUND_TRIPS[2], ROUND_TRIPS[3], OTHERS[0], OTHERS[1]]
    assert group_to_hand_out(queue, ROUND_TRIPS[:2] + OTHERS[1:], at_once=2) == OTHERS[0]


def test_with_no_round_trip_left_the_queue_order_holds() -> None:
    assert group_to_hand_out([OTHERS[1], OTHERS[0]], [], at_once=2) == OTHERS[1]


def test_round_trips_left_alone_go_out_even_past_the_limit() -> None:
    assert group_to_hand_out([ROUND_TRIPS[2], ROUND_TRIPS[3]], ROUND_TRIPS[:2], at_once=2) == ROUND_TRIPS[2]


def test_an_empty_queue_hands_out_nothing() -> None:
    assert group_to_hand_out([], ROUND_TRIPS, at_once=2) is None
