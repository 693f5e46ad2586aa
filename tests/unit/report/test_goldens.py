"""check_golden itself: a missing golden fails (deleting one must not turn its tests into skips), a stale one
fails, and only an explicit UPDATE_GOLDENS=1 writes one."""

from __future__ import annotations

import pytest
import report_helpers


@pytest.fixture
def golden_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(report_helpers, "GOLDEN", tmp_path)
    monkeypatch.delenv("UPDATE_GOLDENS", raising=False)
    return tmp_path


def test_a_missing_golden_fails_and_writes_nothing(golden_dir):
    with pytest.raises(pytest.fail.Exception, match="missing"):
        report_helpers.check_golden("new.md", "text\n")
    assert not (golden_dir / "new.md").exists()


def test_a_stale_golden_fails(golden_dir):
    (golden_dir / "old.md").write_text("before\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="stale"):
        report_helpers.check_golden("old.md", "after\n")


def test_update_goldens_writes_it_and_says_so(golden_dir, monkeypatch):
    monkeypatch.setenv("UPDATE_GOLDENS", "1")
    with pytest.raises(pytest.skip.Exception, match="wrote"):
        report_helpers.check_golden("sub/new.md", "text\n")
    assert (golden_dir / "sub" / "new.md").read_text(encoding="utf-8") == "text\n"


def test_every_golden_of_the_suite_is_committed():
    """The goldens the suite compares with are in the repository (a missing one fails its own test as well)."""
    names = {path.relative_to(report_helpers.GOLDEN).as_posix() for path in report_helpers.GOLDEN.rglob("*.md")}
    assert {"diff.md", "history.md", "mixed_cpu.md", "mixed_gpu.md", "docs_region.md"} <= names
