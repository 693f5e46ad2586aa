"""A run's end after its last cell: its zygote stopped and its folders removed while pytest prints its summary.

Why: on the GPU default the controller spent, after xdist had ended the workers, 1.2 s printing its summary, then
one after another 1.0 s stopping the zygote (it ends with the loaders it forked ahead, each with a CUDA context)
and 2.4 s removing the workers' folder and the run's cache folder, one Inductor and Triton cache per worker. None
of them waits for another: side by side, the last cell's end to pytest's end went from 6.2 s to 4.0 s on a fresh
H200 (docs/benchmarks.md, "How the GPU default got from 465 s to 284 s").
A thread per entry removed 64,000 small files in a third of one
walk's time on two cores and ext4 (unlinks wait for the file system), and no faster than one walk on the H200 host.
What the zygote may still write as it ends is caught by the last removal, made once it has ended.

A module of its own that imports nothing of the harness, so that the plugin's hooks can start and join it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

REMOVERS = 8  # threads removing a folder's entries at once


class RunEnd:
    """Started once the last cell has ended: `stop_zygote` in a thread of its own, and the entries of each folder
    removed by REMOVERS threads beside it. `finish` waits for both, raises what `stop_zygote` raised, then removes
    the folders themselves."""

    def __init__(self, stop_zygote: Callable[[], None], folders: Iterable[Path]) -> None:
        self.folders = [Path(folder) for folder in folders]
        self._pool = ThreadPoolExecutor(REMOVERS + 1, thread_name_prefix="tcm-run-end")
        self._stopping: Future[None] = self._pool.submit(stop_zygote)
        self._removing = [self._pool.submit(shutil.rmtree, entry, True) for entry in _entries(self.folders)]

    def finish(self) -> None:
        try:
            for removal in self._removing:
                removal.result()
            self._stopping.result()
        finally:
            self._pool.shutdown(wait=True)
            for folder in self.folders:
                shutil.rmtree(folder, ignore_errors=True)


def _entries(folders: list[Path]) -> list[Path]:
    entries: list[Path] = []
    for folder in folders:
        try:
            entries += sorted(folder.iterdir())
        except OSError:  # gone already, or never made: nothing to remove
            continue
    return entries
