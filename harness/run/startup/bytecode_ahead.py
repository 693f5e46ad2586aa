"""Torch's bytecode compiled with the spare cores while the zygote imports it, on a machine that has none yet.

Where the environment forbids bytecode (PYTHONDONTWRITEBYTECODE), a run keeps it in a cache of its own
(harness.run.bytecode). On a machine with none yet (a fresh GPU machine, the nightly's), the zygote's warm-up
then compiles the ~2,000 modules that torch, Dynamo and Inductor import one after another, and no cell starts
before that warm-up ends. `python -m compileall` over the same packages, in parallel, fills the cache first, and
the warm-up reads much of it from there (measured: docs/benchmarks.md, "How the GPU default got from 465 s to 284 s").

Only with cores to spare (MIN_SPARE_CORES besides the controller and the zygote): on two cores the compile would
take the zygote's own core. Bytecode changes no result (Python checks each file against its source's mtime and
size), and importlib writes each file atomically, so the compile and the imports never race.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from harness.run.bytecode import DONT_WRITE, PREFIX
from harness.run.workers import usable_cores

# What a run's zygote and workers import: torch (with numpy and opt_einsum where installed), triton, pytest and xdist.
ROOTS = ("torch", "triton", "numpy", "opt-einsum", "pytest", "pytest-xdist")
MIN_SPARE_CORES = 4
BUSY_CORES = 2  # the controller's and the zygote's
REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
EXTRA_MARKER = re.compile(r"\bextra\s*==")


def skipped_folders(folders: Iterable[str | Path]) -> str:
    """compileall's `-x` pattern for the folders below `folders` that no run imports: each `test` or `tests` folder,
    and torch's distributed test helpers. Anchored below the folders given: a folder above them may itself be named
    `tests` (nox's virtualenv `.nox/tests`), and an unanchored pattern then skipped every file."""
    below = "|".join(re.escape(str(folder).rstrip("/\\") + os.sep) for folder in folders)
    return rf"(?:{below})(?:.*[/\\])?(?:tests?|testing[/\\]_internal[/\\]distributed)[/\\]"


def package_folders(roots: tuple[str, ...] = ROOTS) -> list[Path]:
    """The source folders and modules of the installed distributions `roots` names and of what they require,
    transitively (not their extras: those are imported on demand, and they reach far)."""
    seen: set[str] = set()
    pending = list(roots)
    found: set[Path] = set()
    while pending:
        name = _canonical(pending.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in distribution.requires or ():
            match = REQUIREMENT_NAME.match(requirement)
            if match and not EXTRA_MARKER.search(requirement):
                pending.append(match.group(1))
        found.update(_top_level_sources(distribution))
    return sorted(found)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _top_level_sources(distribution: importlib.metadata.Distribution) -> set[Path]:
    """Each top-level package folder and module a distribution installed (from its RECORD)."""
    firsts = {file.parts[0] for file in distribution.files or () if len(file.parts) > 1 or file.suffix == ".py"}
    tops: set[Path] = set()
    for first in firsts:
        if first in ("..", "__pycache__") or first.endswith((".dist-info", ".egg-info", ".data", ".libs")):
            continue
        path = Path(str(distribution.locate_file(first)))
        if path.is_dir() or path.suffix == ".py":
            tops.add(path)
    return tops


def torch_bytecode_missing() -> bool:
    """True when this process writes its bytecode under a prefix (the run's own, harness.run.bytecode) that holds
    none of torch's yet. A prefix the user set with PYTHONDONTWRITEBYTECODE is read, never written."""
    if not sys.pycache_prefix or sys.dont_write_bytecode:
        return False
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return False
    return not Path(importlib.util.cache_from_source(spec.origin)).exists()


def start_compiling_ahead(cores: int | None = None) -> subprocess.Popen | None:
    """`python -m compileall` over torch and what it imports into this process's bytecode cache, in the background;
    None where there is nothing to gain: no cache of the run's own, torch's bytecode already in it, or too few
    cores. The caller stops it (`stop_compiling`) when the run ends; most of it is done within seconds."""
    spare = (usable_cores() if cores is None else cores) - BUSY_CORES
    if spare < MIN_SPARE_CORES or not torch_bytecode_missing():
        return None
    folders = package_folders()
    if not folders:
        return None
    environment = dict(os.environ)
    environment[PREFIX] = str(sys.pycache_prefix)
    environment.pop(DONT_WRITE, None)
    # timestamp-checked files, as an import writes them (SOURCE_DATE_EPOCH would make compileall write hash-checked ones)
    command = [sys.executable, "-m", "compileall", "-q", "-j", str(spare), "--invalidation-mode", "timestamp",
               "-x", skipped_folders(folders), *map(str, folders)]
    return subprocess.Popen(command, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def stop_compiling(process: subprocess.Popen | None) -> None:
    """End the compile and its pool if it is still going (what it wrote stays: each file is whole)."""
    if process is None:
        return
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    process.wait()
