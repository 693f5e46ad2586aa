"""`harness perf-diff`: which style's overhead over `native` grew against a baseline perf file.

Overhead is a ratio inside one file (a style's host time over native's, same mode and size), so two
runs on different days compare what the style adds, not how busy the machine was.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from harness.perf.performance import PerfIndex, kernels_of, paired_ratios, sizes_of
from harness.perf_results import PerfFile
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.vocab import CONTROL_STYLE


@dataclass(frozen=True)
class OverheadGrowth:
    """A style's overhead over native (host time over native's, paired by process) in the baseline and now.

    `baseline_range` / `new_range`: the lowest and highest paired ratio over the processes of each run."""

    kernel: str
    style: str
    mode: str
    size: int
    baseline: float
    new: float
    baseline_range: tuple[float, float]
    new_range: tuple[float, float]
    processes: tuple[int, int]  # processes behind the baseline's and the new run's ratios

    @property
    def growth(self) -> float:
        return self.new / self.baseline - 1

    @property
    def beyond_noise(self) -> bool | None:
        """Whether every process of the new run shows more overhead than every process of the baseline; None
        when either run timed a single process (nothing to tell noise from growth with)."""
        if min(self.processes) < 2:
            return None
        return self.new_range[0] > self.baseline_range[1]

    def flagged(self, threshold: float) -> bool:
        """Grown by more than `threshold`, and beyond the spread between processes where both runs measured it."""
        return self.growth > threshold and self.beyond_noise is not False


def overheads(perf: PerfFile) -> dict[tuple[str, str, str, int], list[float]]:
    """(kernel, style, mode, size) -> the paired ratios of host time to native's, for every non-native style."""
    index = PerfIndex(perf.records)
    found = {}
    for record in perf.records:
        if record.style == CONTROL_STYLE or not record.timed:
            continue
        ratios = paired_ratios(record, index.get(record.kernel, CONTROL_STYLE, record.mode, record.size))
        if ratios:
            found[(record.kernel, record.style, record.mode, record.size)] = ratios
    return found


def overhead_growth(baseline: PerfFile, new: PerfFile) -> list[OverheadGrowth]:
    """Every perf cell with an overhead in both files, the largest growth first."""
    old, now = overheads(baseline), overheads(new)
    rows = [OverheadGrowth(*key, baseline=statistics.median(old[key]), new=statistics.median(now[key]),
                           baseline_range=(min(old[key]), max(old[key])), new_range=(min(now[key]), max(now[key])),
                           processes=(len(old[key]), len(now[key])))
            for key in old.keys() & now.keys()]
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


def _range(low_high: tuple[float, float], processes: int) -> str:
    return f"{low_high[0]:.2f}-{low_high[1]:.2f}x" if processes > 1 else "one process"


def render_growth(rows: list[OverheadGrowth], threshold: float, baseline_name: str, new_name: str) -> str:
    flagged = [row for row in rows if row.flagged(threshold)]
    within_noise = [row for row in rows if row.growth > threshold and not row.flagged(threshold)]
    lines = ["## Performance: overhead over native against the baseline", "",
             f"Baseline `{escape_cell(baseline_name)}`, this run `{escape_cell(new_name)}`: {len(rows)} style x mode x "
             f"size cells in both; {len(flagged)} grew by more than {100 * threshold:.0f}% "
             "beyond the spread between processes"
             + (f" ({len(within_noise)} more grew that much within it, not flagged)" if within_noise else "") + ".", ""]
    if not rows:
        return "\n".join(lines + ["Nothing to compare: no cell has a host time and a native control in both files.", ""])
    if any(row.beyond_noise is None for row in rows):
        lines += ["Where either run timed a single process (`--processes 1`), growth alone decides: one process's "
                  "launch-bound host time is one draw from a wide spread (docs/performance.md).", ""]
    table = [[("**grew**" if row.flagged(threshold) else ""), escape_cell(row.kernel), row.style, row.mode, str(row.size),
              f"{row.baseline:.2f}x", _range(row.baseline_range, row.processes[0]), f"{row.new:.2f}x",
              _range(row.new_range, row.processes[1]), f"{100 * row.growth:+.0f}%"]
             for row in (flagged + within_noise or rows[:10])]
    heading = "Flagged, and grown within the noise:" if flagged or within_noise else "Largest changes (none flagged):"
    return "\n".join(lines + [heading, "", markdown_table(
        ["flag", "kernel", "style", "mode", "size", "baseline x native", "baseline, by process", "now x native",
         "now, by process", "change"], table), ""])
