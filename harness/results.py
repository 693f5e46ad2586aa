"""Results files: JSON Lines, a header then one flushed line per finished cell.

A cell result is a plain record (docs/architecture.md): it crosses process boundaries as a
dict, and this module imports no torch so the report side runs anywhere.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.jsonl import json_line, json_objects
from harness.records import HeaderedFile, PlainRecord
from harness.version import __version__
from harness.vocab import OUTCOMES, PIPELINES, STAGES, STYLES, cell_id

SCHEMA_VERSION = 1
# detail key: why the worker that ran the cell retired after it (a CUDA fault); written by the worker, read by shards
WORKER_RETIRED = "worker_retired"
# --reuse (harness.run.earlier.cells): the cell's content key in its detail, where a reused record came from
# ({"file", "started"}), and the run's part of every key in the header
REUSE_KEY, REUSED_FROM, REUSE_INPUTS = "reuse_key", "reused_from", "reuse_inputs"
RETIREMENT_S = 4.5  # a retired worker's replacement starting, until its group's next cell runs (docs/maintainers.md, "Ordering")


class ResultsFileError(Exception):
    """A results file that cannot be read as this schema; its message is one line naming the file."""


@dataclass
class CellResult(PlainRecord):
    RECORD_KIND = "cell"

    id: str
    kernel: str
    style: str
    pipeline: str
    outcome: str
    stage: str | None = None
    error_type: str | None = None
    error: str | None = None
    reason: str | None = None  # why a cell is skip or env
    duration_s: float = 0.0
    attempts: int = 1
    worker: str = "main"
    control: dict[str, Any] | None = None  # the native control's result, when this cell is env
    detail: dict[str, Any] = field(default_factory=dict)  # pipeline-specific evidence
    repeats: list[str] | None = None  # with --repeat N: each run's outcome, in order (outcome is `flaky` when they differ)
    call_site: str = ""  # a call-site cell's site (docs/call-sites.md); "" for the main chart's cells
    traceback: str | None = None  # a non-pass's full Python traceback, chained causes included (report --tracebacks)


@dataclass
class ResultsFile(HeaderedFile):
    header: dict[str, Any]
    cells: list[CellResult]
    dropped_torn_line: bool = False


def header_record(environment: dict[str, Any], started: str, command: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "record": "header",
        "schema": SCHEMA_VERSION,
        "environment": environment,
        "started": started,
        "harness_version": __version__,
        "command": command,
        **extra,
    }


class ResultsWriter:
    """Appends one line per cell and flushes it, so a killed run keeps every finished cell."""

    def __init__(self, path: Path, header: dict[str, Any], append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if append and self.path.exists() and self.path.stat().st_size > 0:
            self._file = open(self.path, "a", encoding="utf-8")
        else:
            self._file = open(self.path, "w", encoding="utf-8")
            self._write(header)

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json_line(record))
        self._file.flush()
        os.fsync(self._file.fileno())

    def write_cell(self, result: CellResult) -> None:
        self._write(result.to_record())

    def write_record(self, record: dict[str, Any]) -> None:
        """A record of another kind under the same header (harness perf's), flushed the same way."""
        self._write(record)

    def close(self) -> None:
        self._file.close()


# A record's fields and the JSON types they may hold; anything else is refused with the line number.
_REQUIRED_TEXT = ("id", "kernel", "style", "pipeline", "outcome")
_OPTIONAL_TEXT = ("stage", "error_type", "error", "reason", "traceback")


def _check_header(path: Path, number: int, record: dict[str, Any]) -> None:
    if record.get("record") != "header":
        raise ResultsFileError(f"{path}:{number}: the first line is not a results header")
    if record.get("schema") != SCHEMA_VERSION:
        raise ResultsFileError(
            f"{path}: schema version {record.get('schema')!r} is unknown (this harness reads {SCHEMA_VERSION})"
        )
    for key, kind, name in (("environment", dict, "an object"), ("kernels", dict, "an object"),
                            ("command", (list, str), "a list or a string"), ("started", str, "a string")):
        if record.get(key) is not None and not isinstance(record[key], kind):
            raise ResultsFileError(f"{path}:{number}: header field {key!r} must be {name}, not {type(record[key]).__name__}")


def _type_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with a cell record's fields, or None; checked so that no reader ever crashes on a value."""
    for key in _REQUIRED_TEXT:
        if not isinstance(record.get(key), str) or not record[key]:
            return f"field {key!r} must be a non-empty string"
    for key in _OPTIONAL_TEXT:
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"field {key!r} must be a string or null"
    checks = (
        ("duration_s", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
        ("attempts", lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
        ("worker", lambda v: isinstance(v, str), "a string"),
        ("call_site", lambda v: isinstance(v, str), "a string"),
        ("detail", lambda v: isinstance(v, dict), "an object"),
        ("control", lambda v: v is None or isinstance(v, dict), "an object or null"),
        ("repeats", lambda v: v is None or (isinstance(v, list) and all(isinstance(o, str) for o in v)),
         "a list of outcomes or null"),
    )
    for key, valid, name in checks:
        if key in record and not valid(record[key]):
            return f"field {key!r} must be {name}"

    expected_id = cell_id(record["kernel"], record["style"], record["pipeline"], record.get("call_site") or "")
    if record["id"] != expected_id:
        return f"id {record['id']!r} does not match its kernel/style/pipeline and call_site ({expected_id!r})"
    return None


def _verdict(cell: CellResult) -> tuple[Any, ...]:
    """What two records of one cell must agree on to be the same measurement (times and workers may differ)."""
    return (cell.outcome, cell.stage, cell.error_type, cell.error, cell.reason, cell.repeats)


def unknown_names(cells: list[CellResult]) -> dict[str, list[str]]:
    """Style, pipeline, outcome and stage names the vocabulary does not know (a newer harness, a hand edit)."""
    found: dict[str, set[str]] = {"style": set(), "pipeline": set(), "outcome": set(), "stage": set()}
    for cell in cells:
        for kind, value, known in (("style", cell.style, STYLES), ("pipeline", cell.pipeline, PIPELINES),
                                   ("outcome", cell.outcome, OUTCOMES), ("stage", cell.stage, STAGES)):
            if value is not None and value not in known:
                found[kind].add(value)
    return {kind: sorted(names) for kind, names in found.items() if names}


def _confirms(later: CellResult, earlier: CellResult) -> bool:
    """Whether `later` is the confirmation of `earlier` (harness.run.confirm): its first try is the earlier record."""
    tries = (later.detail.get("confirmation") or {}).get("tries") or [{}]
    return tries[0].get("outcome") == earlier.outcome


def recorded_cell(path: str | Path, cell: str) -> CellResult | None:
    """The last record of `cell` in a results file being written, or None (no such file, cell, or a torn line).

    Cheaper than `read_results` for one cell of a long run: lines that do not name the cell are not parsed."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    needle = json.dumps(cell).encode()
    for line in reversed(data.split(b"\n")):
        if needle not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("record") == "cell" and record.get("id") == cell:
            return CellResult.from_record(record)
    return None


def read_results(path: str | Path) -> ResultsFile:
    """Read and validate a results file; every problem is a ResultsFileError of one line naming the file.

    Tolerated, by design: a torn last line (a run killed mid-write) is dropped and flagged; a cell
    recorded twice with the same verdict is kept once, and so is a cell whose later record confirms the earlier
    one (harness.run.confirm: it holds the earlier outcome as its first try). Refused: anything else that does not parse,
    and a cell recorded twice with different verdicts (which one is true?).
    """
    path = Path(path)
    header: dict[str, Any] | None = None
    cells: list[CellResult] = []
    seen: dict[str, tuple[int, int]] = {}  # cell id -> (line number, index in cells)
    records, dropped = json_objects(path, "results file", ResultsFileError)
    for number, record in records:
        if header is None:
            _check_header(path, number, record)
            header = record
            continue
        if record.get("record") != "cell":
            raise ResultsFileError(f"{path}:{number}: unknown record kind {record.get('record')!r}")
        problem = _type_problem(record)
        if problem:
            raise ResultsFileError(f"{path}:{number}: malformed cell record ({problem})")
        cell = CellResult.from_record(record)
        if cell.id in seen:
            first_number, index = seen[cell.id]
            if _verdict(cells[index]) != _verdict(cell) and not _confirms(cell, cells[index]):
                raise ResultsFileError(
                    f"{path}:{number}: cell {cell.id} is recorded twice with different results "
                    f"(line {first_number}: {cells[index].outcome}, line {number}: {cell.outcome})"
                )
            cells[index] = cell
            continue
        seen[cell.id] = (number, len(cells))
        cells.append(cell)
    if header is None:
        raise ResultsFileError(f"{path}: empty results file (no header)")
    return ResultsFile(header=header, cells=cells, dropped_torn_line=dropped)


def weighed_durations(results: ResultsFile) -> dict[str, float]:
    """Each cell's weight in the runs after this one (their order, shards and time left): its duration_s, and for a
    cell that retired its worker (a CUDA error poisons a process) the start of the worker that replaces it, which its
    own duration leaves out."""
    return {cell.id: float(cell.duration_s) + (RETIREMENT_S if cell.detail.get(WORKER_RETIRED) else 0.0)
            for cell in results.cells}
