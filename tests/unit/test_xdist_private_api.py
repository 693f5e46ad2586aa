"""The private pytest-xdist API the matrix relies on (harness/plugin/xdist_scheduler.py) is all there.

When an xdist release changes it, this test fails with one line per missing piece, naming the version, so
that the bound in pyproject.toml is raised only after the scheduler was checked against the new release.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadGroupScheduling

from harness.plugin.xdist_scheduler import private_api_problems


def test_the_installed_xdist_has_what_the_matrix_uses() -> None:
    problems = private_api_problems()
    assert not problems, "\n".join(problems)


def test_a_missing_piece_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for owner in LoadGroupScheduling.__mro__:  # xdist defines it on LoadScopeScheduling, its base
        if "_pending_of" in vars(owner):
            monkeypatch.delattr(owner, "_pending_of")
    problems = private_api_problems()
    assert any("LoadGroupScheduling._pending_of is gone" in problem and "pytest-xdist" in problem for problem in problems)
