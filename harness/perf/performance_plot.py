"""reports/performance.png: host time over `native` by style and mode at the launch-bound size (matplotlib, Agg)."""

from __future__ import annotations

import math
from pathlib import Path

from harness.perf.performance import PerfIndex, kernels_of, overhead, sizes_of
from harness.perf_results import MODES, PerfFile
from harness.vocab import CONTROL_STYLE, STYLES


def overhead_by_style_and_mode(perf: PerfFile) -> dict[tuple[str, str], float]:
    """(style, mode) -> the geometric mean over kernels of host time over native's (paired by process), at each
    kernel's smallest size."""
    index = PerfIndex(perf.records)
    ratios: dict[tuple[str, str], list[float]] = {}
    for kernel in kernels_of(perf):
        size = min(sizes_of(perf, kernel))
        for style in STYLES:
            for mode in MODES:
                value = overhead(index, kernel, style, CONTROL_STYLE, mode, size)
                if value:
                    ratios.setdefault((style, mode), []).append(value)
    return {key: math.exp(sum(map(math.log, values)) / len(values)) for key, values in ratios.items()}


def write_overhead_plot(perf: PerfFile, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    overhead = overhead_by_style_and_mode(perf)
    modes = [mode for mode in MODES if any(key[1] == mode for key in overhead)]
    styles = [style for style in STYLES if any(key[0] == style for key in overhead)]
    figure, axes = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(1, len(styles))
    for offset, style in enumerate(styles):
        xs = [i + offset * width for i, mode in enumerate(modes) if (style, mode) in overhead]
        ys = [overhead[(style, mode)] for mode in modes if (style, mode) in overhead]
        axes.bar(xs, ys, width, label=style)
    axes.set_xticks([i + width * (len(styles) - 1) / 2 for i in range(len(modes))], modes)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_yscale("log")
    axes.set_ylabel(f"host time per call / {CONTROL_STYLE}'s (geometric mean over kernels)")
    tier = "Triton interpreter on CPU" if perf.environment.get("tier") == "cpu" else str(perf.environment.get("gpu"))
    axes.set_title(f"Overhead by style and mode, launch-bound size ({tier}, torch {perf.environment.get('torch')})",
                   fontsize=10)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
