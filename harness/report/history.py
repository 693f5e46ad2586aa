"""Each capability x style across torch/triton versions, and the first version from which it holds."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.report.aggregate import NOT_MEASURED, YES, cells_for, final_cells, verdict_of
from harness.report.capabilities import CAPABILITIES
from harness.report.chart import chart_columns
from harness.report.environment import tier_of
from harness.report.escape import escape_cell
from harness.report.merge import VOLATILE_ENVIRONMENT_KEYS
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
    """The earliest label from which every later one is Yes; NEVER when the latest is not Yes.

    A column that did not measure the row at all (a run of other pipelines) is passed over."""
    since = NEVER
    for label, word in zip(reversed(labels), reversed(words)):
        if word == NOT_MEASURED:
            continue
        if word != YES:
            break
        since = label
    return since


def _stable_environment(results: ResultsFile) -> dict:
    """The software and hardware a run measured; an absent key and a recorded null or "" are the same."""
    return {k: v for k, v in results.environment.items() if k not in VOLATILE_ENVIRONMENT_KEYS and v not in (None, "")}


def _columns(files: list[tuple[str, ResultsFile]]) -> list[tuple[str, dict[str, CellResult]]]:
    """(label, cells) per column. Files of one environment with disjoint cells (shards, or runs of other
    kernels) share a column; a second environment or a re-run of the same cells at the same versions gets
    its own column, labelled by the environment keys that differ, else by its start time."""
    files = sorted(files, key=lambda f: (version_key(f[1].environment.get("torch")),
                                         version_key(f[1].environment.get("triton")), str(f[1].header.get("started")), f[0]))
    runs: list[tuple[list[str], ResultsFile, dict[str, CellResult]]] = []
    for name, results in files:
        cells = final_cells(results)
        run = next((r for r in runs if _stable_environment(r[1]) == _stable_environment(results)
                    and not set(r[2]) & set(cells)), None)
        if run is None:
            runs.append(([name], results, dict(cells)))
        else:
            run[0].append(name)
            run[2].update(cells)
    columns: list[tuple[str, dict[str, CellResult]]] = []
    for names, results, cells in runs:
        base = version_label(results)
        peers = [r for r in runs if version_label(r[1]) == base]
        envs = [_stable_environment(r[1]) for r in peers]
        differing = sorted(k for k in set().union(*envs) if len({repr(e.get(k)) for e in envs}) > 1)
        env = _stable_environment(results)
        label = base + "".join(f", {k}={env.get(k) or 'none'}" for k in differing)
        if sum(_stable_environment(r[1]) == env for r in peers) > 1:  # a re-run of the same environment
            label += f", run {results.header.get('started')}"
        clash = next((c for c in columns if c[0] == label), None)
        if clash is not None:
            first = next(r[0][0] for r in runs if r[2] is clash[1])
            raise HistoryError(f"{first} and {names[0]}: both are {base}; merge them")
        columns.append((label, cells))
    return columns


def _tier_table(files: list[tuple[str, ResultsFile]]) -> str:
    measured = _columns(files)
    labels = [label for label, _ in measured]
    cells: list[dict[str, CellResult]] = [column for _, column in measured]
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
