"""The heatmap as a PNG (matplotlib, Agg): kernels x pipelines per style, coloured by outcome, for the README
and the nightly job's summary. Drawn from the newest version's cells of the results given."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.report.compare.history import Column, version_columns
from harness.report.markdown.aggregate import ordered
from harness.report.markdown.call_sites import main_cells
from harness.results import CellResult, ResultsFile
from harness.vocab import OUTCOMES, PIPELINES, STYLES

# The same colours as the HTML page (html.py STYLE), one per outcome in vocabulary order.
OUTCOME_COLOURS = {"pass": "#2e7d32", "wrong": "#ad1457", "fail": "#c62828", "crash": "#4a148c",
                   "timeout": "#ef6c00", "skip": "#bdbdbd", "env": "#795548", "flaky": "#f9a825"}
NOT_RUN = "#ffffff"
PANELS_PER_ROW = 3


def heatmap_cells(newest: Column) -> list[CellResult]:
    """The newest version's chart cells: a call-site cell (its own table in the report) would land on the square
    of the main cell of its style and pipeline."""
    return list(main_cells(newest.cells).values())


def write_heatmap_png(files: Sequence[tuple[str, ResultsFile]], path: Path) -> Path:
    """One panel per style (rows: kernels, columns: pipelines); white where the cell was not run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    newest = version_columns(list(files))[0]
    cells = heatmap_cells(newest)
    styles = ordered((c.style for c in cells), STYLES)
    pipelines = ordered((c.pipeline for c in cells), PIPELINES)
    kernels = sorted({c.kernel for c in cells})
    outcomes = [o for o in OUTCOMES if any(c.outcome == o for c in cells)] + \
        sorted({c.outcome for c in cells} - set(OUTCOMES))
    index = {o: i + 1 for i, o in enumerate(outcomes)}
    colours = ListedColormap([NOT_RUN] + [OUTCOME_COLOURS.get(o, "#000000") for o in outcomes])
    at = {(c.kernel, c.style, c.pipeline): c.outcome for c in cells}
    ncols = min(PANELS_PER_ROW, len(styles))
    nrows = -(-len(styles) // ncols)
    width, height = max(3.0, 0.2 * len(pipelines) + 0.6), 0.17 * len(kernels) + 1.8
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols + 1.6, height * nrows + 0.8), squeeze=False)
    panels = [ax for row in axes for ax in row]
    for ax in panels[len(styles):]:
        ax.set_visible(False)
    for ax, style in zip(panels, styles):
        grid = [[index.get(at.get((k, style, p), ""), 0) for p in pipelines] for k in kernels]
        ax.imshow(grid, cmap=colours, vmin=0, vmax=len(outcomes), aspect="auto", interpolation="nearest")
        ax.set_title(style, fontsize=9)
        ax.set_xticks(range(len(pipelines)), pipelines, rotation=90, fontsize=6)
        ax.set_yticks(range(len(kernels)), kernels, fontsize=6)
        ax.set_xticks([x - 0.5 for x in range(1, len(pipelines))], minor=True)
        ax.set_yticks([y - 0.5 for y in range(1, len(kernels))], minor=True)
        ax.grid(which="minor", color="white", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
    fig.legend(handles=[Patch(color=OUTCOME_COLOURS.get(o, "#000000"), label=o) for o in outcomes],
               loc="upper right", ncol=len(outcomes), fontsize=8, frameon=False)
    fig.suptitle(f"{newest.label}: outcome per kernel x pipeline, by style", x=0.01, ha="left", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    path = Path(path)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path
