"""`--reuse RESULTS.jsonl`: the content-keyed cousin of `--resume`. A cell whose key (harness.run.earlier.key) is the
one its record in an earlier results file carries is not run again: that record is copied into the new file,
marked with where it came from. Any difference in the run's part (the harness's source, torch, triton, the GPU,
the tier, the options) reruns every cell; a difference in a kernel's code or spec reruns that kernel's cells.

The key lives in each cell's `detail` (REUSE_KEY) and the run's part in the header (REUSE_INPUTS), so files written
before keys existed still read, and simply reuse nothing. Reads results files only; no torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.report.markdown.aggregate import final_cells
from harness.results import REUSE_INPUTS, REUSE_KEY, REUSED_FROM, CellResult
from harness.run.earlier.resume import read_earlier

# Outcomes copied when the key is unchanged. A crash, a timeout or a flaky cell may come of the machine's load or
# memory at the time rather than of the code: those run again.
REUSABLE_OUTCOMES = ("pass", "wrong", "fail", "skip", "env")


class ReuseError(ValueError):
    """A --reuse file that cannot be read; the message is one line naming it."""


def reused_cells(path: str | Path, keys: dict[str, str], run: dict[str, Any]) -> tuple[dict[str, CellResult], str]:
    """(cell id -> the record to copy, one line saying what was reused and why the rest was not).

    A record is reused only when the earlier run's part equals this run's and its key equals this cell's; a
    record without a key (a file from before keys, a confirmation's new run) is never reused, nor an outcome
    outside REUSABLE_OUTCOMES."""
    path = Path(path)
    results = read_earlier(path, ReuseError, "--reuse names no results file", "reuse")
    earlier_run = results.header.get(REUSE_INPUTS)
    if earlier_run != run:
        return {}, f"reuse: 0 of {len(keys)} cells reused from {path}: {_run_difference(earlier_run, run)}"
    earlier = final_cells(results)
    reused: dict[str, CellResult] = {}
    for cell_id, key in keys.items():
        record = earlier.get(cell_id)
        if record is not None and record.outcome in REUSABLE_OUTCOMES and record.detail.get(REUSE_KEY) == key:
            reused[cell_id] = _marked(record, path, results.header.get("started"))
    return reused, (f"reuse: {len(reused)} of {len(keys)} cells reused from {path} (their key unchanged); "
                    f"running {len(keys) - len(reused)}")


def _marked(record: CellResult, path: Path, started: Any) -> CellResult:
    copy = CellResult.from_record(record.to_record())
    copy.detail = dict(record.detail) | {REUSED_FROM: {"file": str(path), "started": started}}
    return copy


def _run_difference(earlier: Any, current: dict[str, Any]) -> str:
    """Which of the run's inputs changed, in words (the first few)."""
    if not isinstance(earlier, dict):
        return "its header has no reuse inputs (written by a harness without --reuse, or not by `run`)"
    changed = [f"harness source {'changed' if earlier.get('harness_source') else 'unknown'}"
               ] if earlier.get("harness_source") != current["harness_source"] else []
    for part in ("environment", "options"):
        before, now = earlier.get(part) or {}, current[part]
        changed += [f"{name} {before.get(name)!r} -> {now.get(name)!r}" for name in sorted(set(before) | set(now))
                    if before.get(name) != now.get(name)]
    return "the run's inputs differ: " + ", ".join(changed[:4])

