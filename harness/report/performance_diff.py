"""`harness perf-diff`: which style's overhead over `native` grew against a baseline perf file.

Overhead is a ratio inside one file (a style's host time over native's, same mode and size), so two
runs on different days compare what the style adds, not how busy the machine was.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from harness.perf_results import PerfFile
from harness.report.escape import escape_cell
from harness.report.performance import PerfIndex, kernels_of, sizes_of
from harness.report.tables import markdown_table
from harness.vocab import CONTROL_STYLE


@dataclass(frozen=True)
class OverheadGrowth:
    kernel: str
    style: str
    mode: str
    size: int
    baseline: float  # host time over native's, in the baseline
    new: float

    @property
    def growth(self) -> float:
        return self.new / self.baseline - 1


def overheads(perf: PerfFile) -> dict[tuple[str, str, str, int], float]:
    """(kernel, style, mode, size) -> host time over native's, for every non-native style timed with its control."""
    index = PerfIndex(perf.records)
    found = {}
    for record in perf.records:
        if record.style == CONTROL_STYLE or not record.timed:
            continue
        native = index.host(record.kernel, CONTROL_STYLE, record.mode, record.size)
        host = index.host(record.kernel, record.style, record.mode, record.size)
        if native and host:
            found[(record.kernel, record.style, record.mode, record.size)] = host / native
    return found


def overhead_growth(baseline: PerfFile, new: PerfFile) -> list[OverheadGrowth]:
    """Every perf cell with an overhead in both files, the largest growth first."""
    old, now = overheads(baseline), overheads(new)
    rows = [OverheadGrowth(*key, baseline=old[key], new=now[key]) for key in old.keys() & now.keys()]
    return sorted(rows, key=lambda row: (-row.growth, row.kernel, row.style, row.mode, row.size))


def run_to_run_changes(baseline: PerfFile, new: PerfFile) -> list[list[str]]:
    """Per quantity (host and device time, by size rank): the median and largest |change| of the medians of the
    cells timed in both files: the noise of the method when the two files are two runs of one machine."""
    old, now = PerfIndex(baseline.records), PerfIndex(new.records)
    smallest = {kernel: min(sizes_of(new, kernel)) for kernel in kernels_of(new)}
    changes: dict[str, list[float]] = {}
    for key in now.by_key:
        kernel, _, _, size = key
        rank = "launch-bound size" if size == smallest[kernel] else "large size"
        for clock, read in (("host", PerfIndex.host), ("device", PerfIndex.device)):
            before, after = read(old, *key), read(now, *key)
            if before and after:
                changes.setdefault(f"{clock} time, {rank}", []).append(abs(after / before - 1))
    return [[name, str(len(values)), f"{100 * statistics.median(values):.1f}%", f"{100 * max(values):.1f}%"]
            for name, values in sorted(changes.items())]


def render_changes(rows: list[list[str]]) -> str:
    if not rows:
        return ""
    return "\n".join(["", "Run-to-run change of the medians (cells timed in both files):", "",
                      markdown_table(["quantity", "cells", "median abs change", "largest abs change"], rows), ""])


def render_growth(rows: list[OverheadGrowth], threshold: float, baseline_name: str, new_name: str) -> str:
    flagged = [row for row in rows if row.growth > threshold]
    lines = ["## Performance: overhead over native against the baseline", "",
             f"Baseline `{escape_cell(baseline_name)}`, this run `{escape_cell(new_name)}`: {len(rows)} style x mode x "
             f"size cells in both; {len(flagged)} grew by more than {100 * threshold:.0f}%.", ""]
    if not rows:
        return "\n".join(lines + ["Nothing to compare: no cell has a host time and a native control in both files.", ""])
    table = [[("**grew**" if row.growth > threshold else ""), escape_cell(row.kernel), row.style, row.mode, str(row.size),
              f"{row.baseline:.2f}x", f"{row.new:.2f}x", f"{100 * row.growth:+.0f}%"]
             for row in (flagged or rows[:10])]
    heading = "Flagged:" if flagged else "Largest changes (none flagged):"
    return "\n".join(lines + [heading, "", markdown_table(
        ["", "kernel", "style", "mode", "size", "baseline x native", "now x native", "change"], table), ""])
