"""The harness's own tests run on the tier this machine has; the CPU tier needs the interpreter before any kernel import.

The `slow` marker means "runs real matrix cells or a real `harness` command: seconds to minutes". `-m "not slow"`
is the quick loop (docs/maintainers.md, "The harness's own tests"); so that it stays quick, a test without the
marker whose body runs longer than QUICK_LIMIT_S fails, naming the marker it needs.
"""

from __future__ import annotations

import time

import pytest

from harness.run.environment import enter_tier, resolve_tier

TIER = resolve_tier("auto")
enter_tier(TIER)

# Far above any quick test (they take well under a second alone), far below any slow one: the margin is for a
# machine whose cores are shared.
QUICK_LIMIT_S = 60.0


def slow_marker_problem(marked_slow: bool, seconds: float, limit: float = QUICK_LIMIT_S) -> str | None:
    """Why a test's marker is wrong for its measured time, or None."""
    if not marked_slow and seconds > limit:
        return (f"took {seconds:.0f} s without the `slow` marker (over {limit:.0f} s): mark it "
                "@pytest.mark.slow, or make it quick")
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    started = time.perf_counter()
    outcome = yield
    problem = slow_marker_problem(item.get_closest_marker("slow") is not None, time.perf_counter() - started)
    if problem and outcome.excinfo is None:
        pytest.fail(problem, pytrace=False)
