"""The harness's own tests run on the tier this machine has; the CPU tier needs the interpreter before any kernel import.

The `slow` marker means "runs real matrix cells or a real `harness` command: seconds to minutes". `-m "not slow"`
is the quick loop (docs/maintainers.md, "The harness's own tests"); so that it stays quick, a test without the
marker whose body costs more than QUICK_LIMIT_S of CPU time fails, naming the marker it needs.
"""

from __future__ import annotations

import os
import resource
import shutil
import tempfile

import pytest
from harness_commands import forked_cpu_seconds
from suite_rules import LONGEST_FIRST, slow_marker_problem, start_order

from harness.run.caches import CACHE_VARIABLES, KEPT_CACHES_VARIABLE
from harness.run.environment import enter_tier, resolve_tier

TIER = resolve_tier("auto")
enter_tier(TIER)
_suite_caches = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Each process of the suite (each xdist worker) compiles into caches of its own, and so do the cells and
    scripts its tests start: two suite workers sharing torch's default folder could rewrite a package's files
    while the other zips them (docs/maintainers.md, "Order independence"). The harness runs a suite worker
    starts, one after another, keep their processes' caches in its folder (TCM_KEEP_CACHES), so that each run
    reuses what the ones before it compiled, as when they all shared torch's default folder."""
    # pytest-xdist's loadscope hands out modules by how many tests each has, largest first, unless told not to: the
    # order below (pytest_collection_modifyitems, the longest modules first) was undone, and the CPU-tier default
    # selection started 14 minutes into a 22-minute suite (docs/maintainers.md, "The harness's own tests").
    config.option.loadscopereorder = False
    folder = tempfile.mkdtemp(prefix="tcm-suite-caches-")
    config.stash[_suite_caches] = folder
    for variable, name in CACHE_VARIABLES:
        os.environ[variable] = os.path.join(folder, name)
    os.environ[KEPT_CACHES_VARIABLE] = os.path.join(folder, "runs")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _suite_caches in config.stash:
        shutil.rmtree(config.stash[_suite_caches], ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    modules: dict[str, int] = {}  # a module is kept whole: its order is that of its slowest test
    for item in items:
        path = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else str(item.path)
        order = start_order(path, item.get_closest_marker("slow") is not None)
        modules[path] = min(order, modules.get(path, order))
    items.sort(key=lambda item: modules.get(item.path.relative_to(root).as_posix() if item.path.is_relative_to(root)
                                            else str(item.path), len(LONGEST_FIRST) + 1))


def cpu_seconds() -> float:
    """CPU time of this process, of the children it waited for and of the harness commands it had forked
    (tests/harness_commands.py): what a test costs, whatever else the machine runs (a wall clock on two shared
    cores would call a quick test slow)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + forked_cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    started = cpu_seconds()
    outcome = yield
    problem = slow_marker_problem(item.get_closest_marker("slow") is not None, cpu_seconds() - started)
    if problem and outcome.excinfo is None:
        pytest.fail(problem, pytrace=False)
