"""Each capability x style across versions: one column per (torch, triton) of one tier and device family,
newest first, and where the verdict changed between two neighbouring versions, with each side's evidence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.report.markdown.aggregate import NOT_MEASURED, Verdict, cells_for, final_cells, verdict_of
from harness.report.markdown.capabilities import CAPABILITIES
from harness.report.markdown.chart import chart_columns
from harness.report.markdown.environment import tier_of
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.footnotes import cause_summary, describe, group_by_cause, mark
from harness.report.markdown.tables import markdown_table
from harness.results import CellResult, ResultsFile

HISTORY_DIR = Path("reports") / "history"  # one results file per tier and torch release: <tier>-torch<release>.jsonl
TIER_TITLES = {"gpu": "GPU tier", "cpu": "CPU interpreter tier (TRITON_INTERPRET=1, not a GPU)"}
CAUSES_PER_SIDE = 2  # a footnote stays two lines: each side names its most common causes


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


def torch_release(version: object) -> str:
    """The release a torch build belongs to: "2.13.0" from "2.13.0+cu130", "2.13.0.dev20261203+cu130" or "2.13.0rc2"."""
    match = re.match(r"v?(\d+(?:\.\d+)*)", str(version or ""))
    if not match:
        raise HistoryError(f"torch version {version!r}: no release number in it")
    return match.group(1)


def history_file(environment: dict, directory: Path = HISTORY_DIR) -> Path:
    """Where one run's results are kept for the history: one file per tier and torch release, so that a
    nightly build of a release replaces the one before it, and the release itself replaces them all."""
    return directory / f"{tier_of(environment)}-torch{torch_release(environment.get('torch'))}.jsonl"


def device_family(environment: dict) -> str:
    """The GPU's model ("H100" from "NVIDIA H100 80GB HBM3"); "" on the CPU tier or when no GPU was named."""
    if tier_of(environment) == "cpu":
        return ""
    gpu = str(environment.get("gpu") or "")
    model = re.search(r"\b([A-Z]{1,3}\d{2,4}[A-Za-z]?)\b", gpu)
    return model.group(1) if model else gpu.replace("NVIDIA", "").strip()


@dataclass
class Column:
    """Every cell measured at one (torch, triton) in one tier and device family, from one or more files."""

    torch: str
    triton: str
    files: list[str]
    cells: dict[str, CellResult]

    @property
    def label(self) -> str:
        return f"torch {self.torch} / triton {self.triton}"

    @property
    def short(self) -> str:
        """The torch release alone ("2.13.0"), for the change column."""
        return self.torch.split("+", 1)[0]


def version_columns(files: list[tuple[str, ResultsFile]]) -> list[Column]:
    """One column per (torch, triton), newest first. Files of one version merge: a cell measured by
    several keeps the result of the run that started last (a re-run supersedes)."""
    by_version: dict[tuple[str, str], Column] = {}
    for name, results in sorted(files, key=lambda f: (str(f[1].header.get("started") or ""), f[0])):
        env = results.environment
        key = (str(env.get("torch") or "unknown"), str(env.get("triton") or "unknown"))
        column = by_version.setdefault(key, Column(key[0], key[1], [], {}))
        column.files.append(name)
        column.cells.update(final_cells(results))
    return sorted(by_version.values(), key=lambda c: (version_key(c.torch), version_key(c.triton)), reverse=True)


def _side(column: Column, verdict: Verdict, cells: list[CellResult]) -> str:
    """One line of evidence for one version: its verdict and the causes of what did not pass."""
    text = f"{escape_cell(column.label)}: {escape_cell(verdict.text())}"
    groups = list(group_by_cause(c for c in cells if c.outcome != "pass").items())
    shown = [f"{describe(key)} ({cause_summary(group).split(';')[0]})"
             for key, group in groups[:CAUSES_PER_SIDE]]
    if len(groups) > CAUSES_PER_SIDE:
        shown.append(f"and {len(groups) - CAUSES_PER_SIDE} more causes")
    return text + (" — " + "; ".join(shown) if shown else "")


def verdict_changed(older: list[CellResult], newer: list[CellResult]) -> bool:
    """Whether the verdict moved over the cells both versions measured: a kernel only one of them ran
    (a wider selection, a new kernel) can never show up as a change of the version."""
    common = {c.id for c in older} & {c.id for c in newer}
    return verdict_of(c for c in older if c.id in common).word != verdict_of(c for c in newer if c.id in common).word


def _changes(columns: list[Column], verdicts: list[Verdict], evidence: list[list[CellResult]],
             notes: list[str]) -> tuple[str, dict[int, int]]:
    """("No up to 2.12.0, Yes from 2.13.0 [n]", {column index: note number}); oldest to newest.

    Versions that did not measure the row are passed over; a change is between two measured neighbours.
    """
    measured = [i for i in reversed(range(len(columns))) if verdicts[i].word != NOT_MEASURED]
    parts, marks = [], {}
    for older, newer in zip(measured, measured[1:]):
        if not verdict_changed(evidence[older], evidence[newer]):
            continue
        note = (_side(columns[older], verdicts[older], evidence[older]) + "\\\n   "
                + _side(columns[newer], verdicts[newer], evidence[newer]))
        if note not in notes:  # the same evidence behind several rows shares one footnote
            notes.append(note)
        marks[newer] = notes.index(note) + 1
        parts.append(f"{escape_cell(verdicts[older].word)} up to {escape_cell(columns[older].short)}, "
                     f"{escape_cell(verdicts[newer].word)} from {escape_cell(columns[newer].short)} {mark(marks[newer])}")
    return "; ".join(parts), marks


def _tier_table(files: list[tuple[str, ResultsFile]], notes: list[str]) -> str:
    columns = version_columns(files)
    all_cells = {k: v for column in columns for k, v in column.cells.items()}
    rows = []
    for capability in CAPABILITIES:
        for chart_column in chart_columns(all_cells):
            evidence = [cells_for(c.cells, chart_column.style, capability.pipelines) for c in columns]
            verdicts = [verdict_of(cells) for cells in evidence]
            if not any(v.asked or v.not_asked for v in verdicts):
                continue  # never measured in any version: a row of blanks says nothing
            change, marks = _changes(columns, verdicts, evidence, notes)
            texts = [escape_cell(v.text()) + (f" {mark(marks[i])}" if i in marks else "") for i, v in enumerate(verdicts)]
            rows.append([escape_cell(capability.name, limit=200), escape_cell(chart_column.style), *texts, change])
    headers = ["Capability", "style", *[escape_cell(c.label) for c in columns], "changed"]
    return markdown_table(headers, rows)


def _section(tier: str, family: str) -> str:
    title = TIER_TITLES.get(tier, f"{tier} tier")
    return f"## {escape_cell(title + (f', {family}' if family else ''))}"


def render_history(files: Sequence[tuple[str, ResultsFile]]) -> str:
    """One table per tier and device family; columns newest first; changes footnoted with both sides' evidence."""
    if not files:
        raise HistoryError("no results files given")
    groups: dict[tuple[str, str], list[tuple[str, ResultsFile]]] = {}
    for name, results in files:
        groups.setdefault((tier_of(results.environment), device_family(results.environment)), []).append((name, results))
    known = list(TIER_TITLES)
    out = ["# History across torch/triton versions",
           escape_cell("One column per torch/triton version (newest first); files of one version are merged. "
                       '"changed" says where the verdict moved between two measured neighbours; its footnote '
                       "gives each side's verdict and the causes of what did not pass.", limit=400)]
    notes: list[str] = []
    for tier, family in sorted(groups, key=lambda g: (known.index(g[0]) if g[0] in known else len(known), g)):
        out += [_section(tier, family), _tier_table(groups[(tier, family)], notes)]
    if notes:
        out.append("\n".join(f"{number}. {text}" for number, text in enumerate(notes, start=1)))
    return "\n\n".join(out) + "\n"
