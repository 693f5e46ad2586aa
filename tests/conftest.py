"""The harness's own tests run on the tier this machine has; the CPU tier needs the interpreter before any kernel import.

The `slow` marker means "runs real matrix cells or a real `harness` command: seconds to minutes". `-m "not slow"`
is the quick loop (docs/maintainers.md, "The harness's own tests"); so that it stays quick, a test without the
marker whose body costs more than QUICK_LIMIT_S of CPU time fails, naming the marker it needs.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tempfile

import pytest
from compiler_cache.compiler_cache import CACHE_VARIABLE, REAL_VARIABLE
from harness_commands import forked_cpu_seconds
from suite_rules import LONGEST_FIRST, slow_marker_problem, start_order

from harness.run.caches import CACHE_VARIABLES, KEPT_CACHES_VARIABLE
from harness.run.environment import enter_tier, resolve_tier

TIER = resolve_tier("auto")
enter_tier(TIER)
_suite_caches = pytest.StashKey[str]()
_compiler_cache = pytest.StashKey[str]()
COMPILER_CACHE_SHIM = os.path.join(os.path.dirname(__file__), "compiler_cache", "g++")
NO_COMPILER_CACHE_VARIABLE = "TCM_SUITE_NO_COMPILER_CACHE"  # set to 1: every build runs the compiler itself


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
    _start_compiler_cache(config)


def _start_compiler_cache(config: pytest.Config) -> None:
    """Once per suite run, in the process that starts the others (xdist's controller, or the only one): every C++
    build of the suite's processes goes through tests/compiler_cache, which keeps each output by the content of its
    inputs; the workers and everything the tests start inherit the variables. Only over GCC (the shim is named g++,
    and Inductor picks its precompiled header's format by that name); NO_COMPILER_CACHE_VARIABLE turns it off."""
    if CACHE_VARIABLE in os.environ or os.environ.get(NO_COMPILER_CACHE_VARIABLE) == "1":
        return
    real = shutil.which(os.environ.get("CXX", "g++"))
    if real is None or "clang" in os.path.basename(real) or "g++" not in os.path.basename(real):
        return
    folder = tempfile.mkdtemp(prefix="tcm-suite-compiler-")
    config.stash[_compiler_cache] = folder
    os.environ.update({CACHE_VARIABLE: folder, REAL_VARIABLE: real, "CXX": COMPILER_CACHE_SHIM,
                       "TCM_SUITE_CACHE_PYTHON": sys.executable})


def pytest_unconfigure(config: pytest.Config) -> None:
    for key in (_suite_caches, _compiler_cache):
        if key in config.stash:
            shutil.rmtree(config.stash[key], ignore_errors=True)


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
