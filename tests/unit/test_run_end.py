"""harness.run.run_end: the zygote's stop and the run's folders' removal, side by side, after the last cell."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.run.run_end import RunEnd


def _tree(root: Path, entries: int = 5) -> Path:
    for index in range(entries):
        leaf = root / f"gw{index}" / "inductor" / "xy"
        leaf.mkdir(parents=True)
        (leaf / "kernel.so").write_bytes(b"x" * 100)
    (root / "owner.json").write_text("{}")
    return root


def test_the_folders_entries_go_while_the_zygote_stops(tmp_path: Path) -> None:
    """The stop waits until the workers' entries are gone: were they removed only after it, it would time out."""
    workers, caches = _tree(tmp_path / "tcm-workers-x"), _tree(tmp_path / "run-1")
    seen: list[bool] = []

    def stop_zygote() -> None:
        deadline = time.monotonic() + 10
        while any(workers.glob("gw*")) or any(caches.glob("gw*")):
            if time.monotonic() > deadline:
                seen.append(False)
                return
            time.sleep(0.01)
        seen.append(True)

    RunEnd(stop_zygote, [workers, caches]).finish()
    assert seen == [True], "the entries were not removed beside the zygote's stop"
    assert not workers.exists() and not caches.exists()


def test_what_the_zygote_writes_as_it_ends_goes_with_the_folder(tmp_path: Path) -> None:
    caches = _tree(tmp_path / "run-1")

    def stop_zygote() -> None:
        time.sleep(0.2)  # after the entries' removal began
        (caches / "controller").mkdir(exist_ok=True)
        (caches / "controller" / "late.json").write_text("{}")

    RunEnd(stop_zygote, [caches]).finish()
    assert not caches.exists()


def test_a_failed_stop_is_raised_after_the_folders_are_removed(tmp_path: Path) -> None:
    caches = _tree(tmp_path / "run-1")

    def stop_zygote() -> None:
        raise OSError("the zygote's folder could not be read")

    end = RunEnd(stop_zygote, [caches, tmp_path / "never-made"])
    with pytest.raises(OSError, match="could not be read"):
        end.finish()
    assert not caches.exists()
