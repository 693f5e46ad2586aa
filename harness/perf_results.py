"""Performance results files: JSON Lines, the matrix's header then one line per timed (or untimed) perf cell.

A perf cell is one (kernel, style, mode, size). It is a plain record like a matrix cell: written by
`harness perf` (harness.perf), read by the report side, which never imports torch.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PERF_SCHEMA = "perf-1"
RECORD_KIND = "perf"
TIMED = "pass"  # a perf cell that was measured has the outcome its matrix cell had: pass

# mode -> the matrix pipeline whose outcome decides whether the mode is timed
MODE_PIPELINES: dict[str, str] = {"eager": "eager", "compile": "compile", "cudagraphs": "cudagraphs", "aoti": "aoti"}
MODES: tuple[str, ...] = tuple(MODE_PIPELINES)


class PerfFileError(Exception):
    """A perf results file that cannot be read; the message is one line naming the file."""


@dataclass
class PerfRecord:
    """One (kernel, style, mode, size): its statistics when timed, its outcome and evidence when not.

    host / device: {"median_s", "ci_low_s", "ci_high_s", "q1_s", "q3_s", "n", "stop", ...} (harness.perf.stats),
    device None where there is none to measure (CPU tier). profiler: the self-check (host overhead by
    torch.profiler, and its ratio to the wall-clock median).
    """

    kernel: str
    style: str
    mode: str
    size: int
    outcome: str
    stage: str | None = None
    error_type: str | None = None
    error: str | None = None
    reason: str | None = None
    host: dict[str, Any] | None = None
    device: dict[str, Any] | None = None
    first_call_s: float | None = None
    profiler: dict[str, Any] | None = None
    bytes_moved: int | None = None
    flops: int | None = None
    dtype: str | None = None
    duration_s: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.kernel}/{self.style}/{self.mode}/{self.size}"

    @property
    def timed(self) -> bool:
        return self.outcome == TIMED and self.host is not None

    def to_record(self) -> dict[str, Any]:
        return {"record": RECORD_KIND, "id": self.id, **dataclasses.asdict(self)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PerfRecord:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in names})


@dataclass
class PerfFile:
    header: dict[str, Any]
    records: list[PerfRecord]

    @property
    def environment(self) -> dict[str, Any]:
        return self.header.get("environment", {})


_FIELD_TYPES: tuple[tuple[str, Any, str], ...] = (
    ("kernel", str, "a string"), ("style", str, "a string"), ("mode", str, "a string"), ("outcome", str, "a string"),
    ("size", int, "a whole number"),
)
_OPTIONAL_OBJECTS = ("host", "device", "profiler")


def _problem(record: dict[str, Any]) -> str | None:
    for key, kind, name in _FIELD_TYPES:
        if not isinstance(record.get(key), kind) or isinstance(record.get(key), bool):
            return f"field {key!r} must be {name}"
    for key in _OPTIONAL_OBJECTS:
        value = record.get(key)
        if value is not None and not (isinstance(value, dict) and isinstance(value.get("median_s", 0), (int, float))):
            return f"field {key!r} must be an object of statistics or null"
    return None


def read_perf_results(path: str | Path) -> PerfFile:
    """Read and validate a perf results file; every problem is a PerfFileError naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise PerfFileError(f"{path}: no such perf results file")
    header: dict[str, Any] | None = None
    records: list[PerfRecord] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PerfFileError(f"{path}: cannot be read as text ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PerfFileError(f"{path}:{number}: not a JSON line ({exc.msg})") from None
        if not isinstance(record, dict):
            raise PerfFileError(f"{path}:{number}: a line is not a JSON object")
        if header is None:
            if record.get("record") != "header" or record.get("perf_schema") != PERF_SCHEMA:
                raise PerfFileError(f"{path}:{number}: not a perf results header (expected perf_schema {PERF_SCHEMA!r}; "
                                    "a matrix results file is read by `harness report`)")
            header = record
            continue
        if record.get("record") != RECORD_KIND:
            raise PerfFileError(f"{path}:{number}: unknown record kind {record.get('record')!r}")
        problem = _problem(record)
        if problem:
            raise PerfFileError(f"{path}:{number}: malformed perf record ({problem})")
        records.append(PerfRecord.from_record(record))
    if header is None:
        raise PerfFileError(f"{path}: empty perf results file (no header)")
    return PerfFile(header=header, records=records)
