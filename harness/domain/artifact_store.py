"""The worker's store of built artifacts (AOTInductor packages, saved programs), by the fingerprint of what they
were built from (harness.domain.pipelines.artifacts computes it).

A module that imports neither torch nor the rest of the harness: a worker makes its store before its first
cell has entered its tier (harness.run.isolation.worker_mode).
"""

from __future__ import annotations

import shutil
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

KEEP = 48  # artifacts kept per worker: a kernel's packages for every style and call site, then the oldest go


@dataclass(frozen=True)
class Artifact:
    path: Path
    built_by: str  # the cell that built it, for the evidence


@dataclass(frozen=True)
class Fetched:
    """What `ArtifactStore.fetch` gives a cell: the path to load, and whether it built it or reused one."""

    path: Path
    reused_from: str | None  # the cell that built it, when this cell did not


class ArtifactStore:
    """One worker's artifacts, by fingerprint; a build is copied in from the building cell's folder, which goes
    with the cell."""

    def __init__(self, directory: Path, keep: int = KEEP) -> None:
        self.directory = directory
        self.keep = keep
        self.kept: OrderedDict[str, Artifact] = OrderedDict()

    def fetch(self, fingerprint: str, cell: str, build: Callable[[], Path]) -> Fetched:
        """The artifact for this fingerprint: kept one, else `build()` (which raises as it would alone) and keep it."""
        known = self.kept.get(fingerprint)
        if known is not None and known.path.is_file():
            self.kept.move_to_end(fingerprint)
            return Fetched(known.path, known.built_by)
        built = build()
        self.directory.mkdir(parents=True, exist_ok=True)
        kept = self.directory / f"{fingerprint[:24]}{built.suffix}"
        shutil.copyfile(built, kept)
        self.kept[fingerprint] = Artifact(kept, cell)
        while len(self.kept) > self.keep:
            _, oldest = self.kept.popitem(last=False)
            oldest.path.unlink(missing_ok=True)
        return Fetched(built, None)
