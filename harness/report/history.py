"""Each capability x style across torch/triton versions, and the first version from which it holds."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.report.aggregate import YES, cells_for, final_cells, verdict_of
from harness.report.capabilities import CAPABILITIES
from harness.report.chart import chart_columns
from harness.report.environment import tier_of
from harness.report.escape import escape_cell
from harness.report.tables import markdown_table
from harness.results import CellResult, ResultsFile

NEVER = "-"
TIER_TITLES = {"gpu": "GPU tier", "cpu": "CPU interpreter tier (TRITON_INTERPRET=1, not a GPU)"}


class HistoryError(Exception):
    """Results that cannot be laid out as one column per version; the message names the files."""


def version_key(version: object) -> tuple:
    """Order "2.6.0a0" < "2.6.0" < "2.6.0.post1" < "2.11.0+cu130" without needing `packaging`."""
    text = str(version or "")
    match = re.match(r"v?(\d+(?:\.\d+)*)(.*)", text)
    if not match:
        return ((), 1, text)
    release = tuple(int(part) for part in match.group(1).split("."))
    suffix = match.group(2).split("+", 1)[0]
    phase = 2 if suffix.startswith(".post") else (0 if suffix else 1)
    return (release, phase, match.group(2))


def version_label(results: ResultsFile) -> str:
    env = results.environment
    return f"torch {env.get('torch') or 'unknown'} / triton {env.get('triton') or 'unknown'}"


def holds_since(labels: Sequence[str], words: Sequence[str]) -> str:
    """The earliest label from which every later one is Yes; NEVER when the latest is not Yes."""
    since = NEVER
    for label, word in zip(reversed(labels), reversed(words)):
        if word != YES:
            break
        since = label
    return since


def _tier_table(files: list[tuple[str, ResultsFile]]) -> str:
    files = sorted(files, key=lambda f: (version_key(f[1].environment.get("torch")),
                                         version_key(f[1].environment.get("triton")), f[0]))
    labels = [version_label(results) for _, results in files]
    for index, label in enumerate(labels):
        if labels.index(label) != index:
            raise HistoryError(f"{files[labels.index(label)][0]} and {files[index][0]}: both are {label}; merge them")
    cells: list[dict[str, CellResult]] = [final_cells(results) for _, results in files]
    columns = chart_columns({k: v for per_file in cells for k, v in per_file.items()})
    rows = []
    for capability in CAPABILITIES:
        for column in columns:
            verdicts = [verdict_of(cells_for(c, column.style, capability.pipelines)) for c in cells]
            if not any(v.asked or v.not_asked for v in verdicts):
                continue  # never measured in any version: a row of blanks says nothing
            rows.append([escape_cell(capability.name, limit=200), escape_cell(column.style)]
                        + [escape_cell(v.text()) for v in verdicts]
                        + [escape_cell(holds_since(labels, [v.word for v in verdicts]))])
    headers = ["Capability", "style"] + [escape_cell(label) for label in labels] + ["holds since"]
    return markdown_table(headers, rows)


def render_history(files: Sequence[tuple[str, ResultsFile]]) -> str:
    """One table per tier, columns ordered by torch then triton version."""
    if not files:
        raise HistoryError("no results files given")
    tiers: dict[str, list[tuple[str, ResultsFile]]] = {}
    for name, results in files:
        tiers.setdefault(tier_of(results.environment), []).append((name, results))
    out = ["# History across torch/triton versions"]
    known = list(TIER_TITLES)
    for tier in sorted(tiers, key=lambda t: (known.index(t) if t in known else len(known), t)):
        out += [f"## {escape_cell(TIER_TITLES.get(tier, tier + ' tier'))}", _tier_table(tiers[tier])]
    out.append(escape_cell(f'"holds since": the earliest version from which every later version is {YES}; '
                           f"{NEVER} when the latest is not.", limit=300))
    return "\n\n".join(out) + "\n"
