"""One atomic write for the whole harness: durable by default, only replaced for files no later boot reads."""

from __future__ import annotations

import os

import pytest

from harness.atomic import write_text_atomic


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
