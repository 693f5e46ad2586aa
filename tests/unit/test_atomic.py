"""One atomic write for the whole harness: durable by default, only replaced for files no later boot reads; and one
atomic copy, for the caches a run's processes share."""

from __future__ import annotations

import os
import shutil

import pytest

from harness.atomic import copy_file_atomic, write_text_atomic


@pytest.mark.parametrize("durable, syncs", [(True, 1), (False, 0)])
def test_a_write_replaces_the_file_and_syncs_it_only_when_durable(tmp_path, monkeypatch, durable, syncs):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    target = tmp_path / "note.json"
    target.write_text("old")
    write_text_atomic(target, "new", durable=durable)
    assert target.read_text() == "new"
    assert len(synced) == syncs
    assert [path.name for path in tmp_path.iterdir()] == ["note.json"]  # no temporary file left beside it


@pytest.mark.parametrize("keep_metadata", [True, False])
def test_a_copy_replaces_the_target_and_keeps_the_mode_and_times_only_when_asked(tmp_path, keep_metadata):
    source = tmp_path / "source.pyc"
    source.write_bytes(b"new")
    os.chmod(source, 0o640)
    os.utime(source, (1_000_000_000, 1_000_000_000))
    target = tmp_path / "cache" / "source.pyc"
    target.parent.mkdir()
    copy_file_atomic(source, target, keep_metadata=keep_metadata)
    copy_file_atomic(source, target, keep_metadata=keep_metadata)  # again: replaced
    assert target.read_bytes() == b"new"
    assert (target.stat().st_mtime == 1_000_000_000) is keep_metadata
    assert ((target.stat().st_mode & 0o777) == 0o640) is keep_metadata
    assert [path.name for path in target.parent.iterdir()] == ["source.pyc"]


def test_a_copy_that_fails_leaves_the_old_file_and_no_partial_one(tmp_path, monkeypatch):
    source, target = tmp_path / "source", tmp_path / "target"
    source.write_bytes(b"new")
    target.write_bytes(b"old")

    def fail_midway(source_path, partial_path, *args, **kwargs):
        with open(partial_path, "wb") as handle:
            handle.write(b"ne")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shutil, "copyfile", fail_midway)
    with pytest.raises(OSError, match="No space left"):
        copy_file_atomic(source, target)
    assert target.read_bytes() == b"old"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["source", "target"]
