"""What the suite holds its own tests to (tests/conftest.py applies them): the meaning of the `slow` marker, and
the order modules start in, so that `nox -s tests` takes the time the README states."""

from __future__ import annotations

# CPU seconds of the test's process and the children it waited for: far above any quick test (well under a second),
# below the slow ones.
QUICK_LIMIT_S = 60.0


def slow_marker_problem(marked_slow: bool, seconds: float, limit: float = QUICK_LIMIT_S) -> str | None:
    """Why a test's marker is wrong for its measured time, or None."""
    if not marked_slow and seconds > limit:
        return (f"took {seconds:.0f} s of CPU without the `slow` marker (over {limit:.0f} s): mark it "
                "@pytest.mark.slow, or make it quick")
    return None


# The modules that take longest, longest first, by their wall time in a suite run of 2026-11-27 (docs/maintainers.md,
# "The harness's own tests"): the reproducer test's harness run and 42 scripts, the fault runs in both isolation
# modes, a whole CPU-tier default selection, the bad-input commands, the zygote's and the workers' real starts.
# With `--dist loadscope` (nox -s tests) each module runs in one worker, and one that started last would be the
# suite's tail alone; pytest-xdist keeps this order because tests/conftest.py turns its reordering off.
LONGEST_FIRST = (
    "tests/integration/test_repro.py",
    "tests/integration/faults/test_isolation.py",
    "tests/integration/test_default_selection.py",
    "tests/unit/test_hostile_input.py",
    "tests/integration/test_loader_zygote.py",
    "tests/integration/faults/test_faults_table.py",
    "tests/integration/test_worker_start.py",
    "tests/integration/faults/test_interrupt.py",
    "tests/integration/test_cpu_tier.py",
)


def start_order(path: str, marked_slow: bool) -> int:
    """Where a test's module goes in the run: the longest first, then every slow module, then the quick ones."""
    if path in LONGEST_FIRST:
        return LONGEST_FIRST.index(path)
    return len(LONGEST_FIRST) + (0 if marked_slow else 1)
