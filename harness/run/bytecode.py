"""A bytecode cache for every Python a run starts, where the environment forbids writing one.

Container images often set PYTHONDONTWRITEBYTECODE=1. Each new Python then compiles torch's ~2,000
modules from source again: every fresh-process AOTI loader, and every child Python that Inductor
(torch <= 2.11) starts to probe the CPU's vector ISAs, which imports torch. What that costs, measured:
docs/maintainers.md, "Isolation".

So, when PYTHONDONTWRITEBYTECODE is set and PYTHONPYCACHEPREFIX is not, the run writes bytecode under
a directory of its own (PYTHONPYCACHEPREFIX) instead of nowhere: never beside the installed sources,
which is what PYTHONDONTWRITEBYTECODE usually protects. Bytecode changes no result: Python checks each
cached file against its source's mtime and size. A PYTHONPYCACHEPREFIX the user set is kept, and so
is PYTHONDONTWRITEBYTECODE with it.

The process that turns the cache on uses it too, from then on; the CLI's entry point turns it on before a command
imports torch (harness.cli.run_and_exit). A run's controller was started with
PYTHONDONTWRITEBYTECODE, so pytest rewrote the asserts of the harness's ~100 plugin modules on every run,
uncached (about 1 CPU-second a run on two cores, docs/maintainers.md, "The harness's own tests"); pytest keeps
its rewritten modules under `sys.pycache_prefix` when one is set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from harness.atomic import copy_file_atomic
from harness.run.caches import caches_root

DONT_WRITE, PREFIX = "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"


def default_prefix() -> Path:
    """One per user, shared by runs and workers: importlib writes each file atomically, so they never race."""
    return caches_root() / "pycache"


def _needs_own_cache(environ: Mapping[str, str]) -> bool:
    """Bytecode forbidden, and no prefix the user set (even an empty one, which is theirs: no bytecode at all)."""
    return bool(environ.get(DONT_WRITE)) and PREFIX not in environ


def enable_bytecode_cache(environ: MutableMapping[str, str] | None = None, prefix: Path | None = None) -> str | None:
    """Point child Pythons at a bytecode cache if the environment forbids one; the prefix set, else None.

    Without `environ` (this process's own environment), this process writes and reads its bytecode there too."""
    own = environ is None
    environ = os.environ if environ is None else environ
    if not _needs_own_cache(environ):
        return None
    chosen = prefix if prefix is not None else default_prefix()
    environ[PREFIX] = str(chosen)
    del environ[DONT_WRITE]
    if own:
        sys.pycache_prefix = str(chosen)
        sys.dont_write_bytecode = False
    return str(chosen)


def run_prefix(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where the Pythons of a run started with this environment read and write bytecode: the prefix the user set, the
    run's own cache where the environment forbids bytecode (`enable_bytecode_cache`), else None: beside the sources."""
    environ = os.environ if environ is None else environ
    if _needs_own_cache(environ):
        return default_prefix()
    return Path(environ[PREFIX]) if environ.get(PREFIX) else None  # the user's; empty or unset, Python uses none


def copy_into_prefix(folder: Path, prefix: Path) -> int:
    """Copy the bytecode compiled beside the sources under `folder` to where Python looks for it under `prefix`.

    A Python with a prefix reads bytecode only there, so a run's processes would compile again, each on its own
    until one has written it, what an install already compiled beside the sources. The bytes are the same (a cached
    file names its source's path, mtime and size, not where it lies); each copy replaces its target atomically, as
    importlib writes. How many files were copied."""
    copied = 0
    for parent, _, names in os.walk(folder):
        if os.path.basename(parent) != "__pycache__":
            continue
        target_folder = prefix / os.path.dirname(os.path.abspath(parent)).lstrip(os.sep)
        target_folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            if name.endswith(".pyc"):
                copy_file_atomic(os.path.join(parent, name), target_folder / name)
                copied += 1
    return copied
