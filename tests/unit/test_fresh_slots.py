"""The run-wide limit on fresh Pythons at once (harness.run.fresh_slots): a full set of slots makes the next
one wait until a slot is let go; 0 slots means no limit."""

from __future__ import annotations

import threading
import time

from harness.run.fresh_slots import fresh_slot, slot_count


def test_a_second_holder_waits_until_the_only_slot_is_let_go(tmp_path):
    held, waited = threading.Event(), []

    def first():
        with fresh_slot(tmp_path, slots=1):
            held.set()
            time.sleep(0.4)

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(5)
    with fresh_slot(tmp_path, slots=1) as seconds:
        waited.append(seconds)
    thread.join()
    assert waited[0] >= 0.2


def test_two_slots_let_two_in_at_once(tmp_path):
    with fresh_slot(tmp_path, slots=2) as first, fresh_slot(tmp_path, slots=2) as second:
        assert first < 0.1 and second < 0.1


def test_no_limit_takes_no_lock(tmp_path):
    with fresh_slot(tmp_path / "unused", slots=0) as seconds:
        assert seconds == 0.0
    assert not (tmp_path / "unused").exists()


def test_the_count_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TCM_FRESH_PROCESSES", "7")
    assert slot_count() == 7
    monkeypatch.setenv("TCM_FRESH_PROCESSES", "many")
    assert slot_count() == 4
