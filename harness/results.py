"""Results files: JSON Lines, a header then one flushed line per finished cell.

A cell result is a plain record (DESIGN.md): it crosses process boundaries as a
dict, and this module imports no torch so the report side runs anywhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


class ResultsFileError(Exception):
    """A results file that cannot be read as this schema; its message is one line naming the file."""


@dataclass
class CellResult:
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

    def to_record(self) -> dict[str, Any]:
        return {"record": "cell", **dataclasses.asdict(self)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> CellResult:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in names})


@dataclass
class ResultsFile:
    header: dict[str, Any]
    cells: list[CellResult]
    dropped_torn_line: bool = False

    @property
    def environment(self) -> dict[str, Any]:
        return self.header.get("environment", {})


def header_record(environment: dict[str, Any], started: str, command: list[str], **extra: Any) -> dict[str, Any]:
    from harness import __version__

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
        self._file.write(json.dumps(record, sort_keys=True) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def write_cell(self, result: CellResult) -> None:
        self._write(result.to_record())

    def close(self) -> None:
        self._file.close()


def _parse_lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    ends_with_newline = text.endswith("\n")
    if ends_with_newline:
        lines = lines[:-1]
    for number, line in enumerate(lines, start=1):
        is_last = number == len(lines)
        yield number, line, is_last and not ends_with_newline


def read_results(path: str | Path) -> ResultsFile:
    """Read and validate a results file; a torn last line (killed run) is dropped, anything else is an error."""
    path = Path(path)
    if not path.exists():
        raise ResultsFileError(f"{path}: no such results file")
    header: dict[str, Any] | None = None
    cells: list[CellResult] = []
    dropped = False
    for number, line, unterminated in _parse_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if unterminated and header is not None:
                dropped = True
                continue
            raise ResultsFileError(f"{path}:{number}: not a JSON line ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ResultsFileError(f"{path}:{number}: a line is not a JSON object")
        if header is None:
            if record.get("record") != "header":
                raise ResultsFileError(f"{path}:{number}: the first line is not a results header")
            if record.get("schema") != SCHEMA_VERSION:
                raise ResultsFileError(
                    f"{path}: schema version {record.get('schema')!r} is unknown (this harness reads {SCHEMA_VERSION})"
                )
            header = record
            continue
        if record.get("record") != "cell":
            raise ResultsFileError(f"{path}:{number}: unknown record kind {record.get('record')!r}")
        try:
            cells.append(CellResult.from_record(record))
        except TypeError as exc:
            raise ResultsFileError(f"{path}:{number}: malformed cell record ({exc})") from None
    if header is None:
        raise ResultsFileError(f"{path}: empty results file (no header)")
    return ResultsFile(header=header, cells=cells, dropped_torn_line=dropped)
