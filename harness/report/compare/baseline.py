"""Expected outcomes per torch/triton/tier, as data files that a pytest plugin turns into strict xfails."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.report.markdown.aggregate import final_cells
from harness.report.markdown.environment import tier_of
from harness.results import ResultsFile

DEFAULT_DIRECTORY = Path("matrix/expected")


class BaselineError(Exception):
    """A baseline file that is not what write_baseline writes; the message names the file."""


def _safe(part: object) -> str:
    """Keep a version whole ("2.11.0+cu130") but replace anything a filename should not hold."""
    text = re.sub(r"[^A-Za-z0-9.+_-]", "_", str(part)).strip(".")
    return text or "unknown"


def baseline_name(environment: dict[str, Any]) -> str:
    """<torch>-<triton>-<tier>.json, e.g. 2.11.0+cu130-3.5.0-gpu.json."""
    parts = (environment.get("torch") or "unknown", environment.get("triton") or "unknown", tier_of(environment))
    return "-".join(_safe(part) for part in parts) + ".json"


def write_baseline(results: ResultsFile, directory: str | Path = DEFAULT_DIRECTORY,
                   source: str | Path | None = None) -> Path:
    """Record every cell's final outcome; sorted keys so a re-run with the same outcomes is no diff."""
    record = {
        "environment": results.environment,
        "source": None if source is None else str(source),
        "cells": {cell_id: cell.outcome for cell_id, cell in final_cells(results).items()},
    }
    path = Path(directory) / baseline_name(results.environment)
    return write_text_atomic(path, json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False) + "\n")


def load_baseline(directory: str | Path, environment: dict[str, Any]) -> dict[str, str] | None:
    """cell id -> expected outcome for this environment, or None when no baseline was recorded for it."""
    path = Path(directory) / baseline_name(environment)
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: not a JSON baseline ({exc})") from None
    cells = record.get("cells") if isinstance(record, dict) else None
    if not isinstance(cells, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in cells.items()):
        raise BaselineError(f"{path}: a baseline needs a \"cells\" object of cell id -> outcome")
    return cells


VERDICT_NOTES = {"confirmed": " (confirmed)", "unconfirmed": " (unconfirmed: not in the --confirm-sample)"}


def changes_against(expected: dict[str, str], results: ResultsFile) -> dict[str, list[str]]:
    """What changed against these expected outcomes, by kind.

    A regression is a cell the baseline expects to pass that does not, confirmed (harness.run.confirm) or never
    re-run (--confirm 0, or left out of --confirm-sample's sample: marked unconfirmed); a `flaky` cell is listed on
    its own and is no regression. Every other difference is listed too, so that a reviewer can accept a new
    baseline (`python -m harness baseline`)."""
    changes: dict[str, list[str]] = {"regressions": [], "newly passing": [], "changed": [], "flaky": []}
    for cell_id, cell in final_cells(results).items():
        was = expected.get(cell_id)
        if was is None or was == cell.outcome:
            continue
        if cell.outcome == "flaky":
            changes["flaky"].append(f"{cell_id}: {was} -> {', '.join(cell.repeats or [])}")
            continue
        kind = "regressions" if was == "pass" else "newly passing" if cell.outcome == "pass" else "changed"
        verdict = (cell.detail.get("confirmation") or {}).get("verdict")
        changes[kind].append(f"{cell_id}: {was} -> {cell.outcome}" + VERDICT_NOTES.get(str(verdict), ""))
    return changes
