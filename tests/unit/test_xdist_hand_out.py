"""Which group the scheduler hands out next (harness.plugin.xdist_scheduler.group_to_hand_out).

Each round-trip cell makes a CUDA context in a fresh process, and the driver makes them one at a time: the
scheduler keeps the collection's (longest-first) order but runs at most a few round-trip groups at once while
other groups can be run instead (docs/maintainers.md, "Ordering").
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


def test_the_queue_order_is_kept_while_few_round_trips_run() -> None:
    queue = [ROUND_TRIPS[2], OTHERS[0]]
    assert group_to_hand_out(queue, ROUND_TRIPS[:1], at_once=2) == ROUND_TRIPS[2]
    assert group_to_hand_out([OTHERS[0], ROUND_TRIPS[2]], ROUND_TRIPS[:2], at_once=2) == OTHERS[0]


def test_a_round_trip_waits_while_enough_run_and_another_group_can_go_instead() -> None:
    queue = [ROUND_TRIPS[2], ROUND_TRIPS[3], OTHERS[0], OTHERS[1]]
    assert group_to_hand_out(queue, ROUND_TRIPS[:2] + OTHERS[1:], at_once=2) == OTHERS[0]


def test_round_trips_left_alone_go_out_even_past_the_limit() -> None:
    assert group_to_hand_out([ROUND_TRIPS[2], ROUND_TRIPS[3]], ROUND_TRIPS[:2], at_once=2) == ROUND_TRIPS[2]


def test_an_empty_queue_hands_out_nothing() -> None:
    assert group_to_hand_out([], ROUND_TRIPS, at_once=2) is None
