"""Performance results files: JSON Lines, the matrix's header then one line per timed (or untimed) perf cell.

A perf cell is one (kernel, style, mode, size). It is a plain record like a matrix cell: written by
`harness perf` (harness.perf), read by the report side, which never imports torch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.jsonl import json_line, json_objects
from harness.records import HeaderedFile, PlainRecord

PERF_SCHEMA = "perf-1"
RECORD_KIND = "perf"
TIMED = "pass"  # a perf cell that was measured has the outcome its matrix cell had: pass

# mode -> the matrix pipeline whose outcome decides whether the mode is timed
MODE_PIPELINES: dict[str, str] = {"eager": "eager", "compile": "compile", "cudagraphs": "cudagraphs", "aoti": "aoti"}
MODES: tuple[str, ...] = tuple(MODE_PIPELINES)


class PerfFileError(Exception):
    """A perf results file that cannot be read; the message is one line naming the file."""


@dataclass
class PerfRecord(PlainRecord):
    """One (kernel, style, mode, size): its statistics when timed, its outcome and evidence when not.

    host / device: {"median_s", "ci_low_s", "ci_high_s", "q1_s", "q3_s", "n", "stop", ...} (harness.perf.stats),
    device None where there is none to measure (CPU tier). profiler: the self-check (host overhead by
    torch.profiler, and its ratio to the wall-clock median).
    """

    RECORD_KIND = RECORD_KIND

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
    run: int | None = None  # in a joined file: the index of its run in the header's `joined_from`

    @property
    def id(self) -> str:
        return f"{self.kernel}/{self.style}/{self.mode}/{self.size}"

    @property
    def timed(self) -> bool:
        return self.outcome == TIMED and self.host is not None

    def to_record(self) -> dict[str, Any]:
        return {**super().to_record(), "id": self.id}  # the id is derived, written for readers that grep


@dataclass
class PerfFile(HeaderedFile):
    header: dict[str, Any]
    records: list[PerfRecord]
    dropped_torn_line: bool = False


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
    """Read and validate a perf results file; every problem is a PerfFileError naming the file and line.

    A torn last line (a run killed mid-write) is dropped, as in matrix results files."""
    path = Path(path)
    header: dict[str, Any] | None = None
    records: list[PerfRecord] = []
    lines, dropped = json_objects(path, "perf results file", PerfFileError)
    for number, record in lines:
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
    return PerfFile(header=header, records=records, dropped_torn_line=dropped)


# What must be equal for two perf files to be one machine's numbers (the rest names hosts and processes).
SAME_MACHINE = ("tier", "torch", "triton", "gpu", "driver", "cuda", "python")


def join_perf_files(paths: list[str | Path]) -> PerfFile:
    """Several perf runs of one machine as one file: each (kernel, mode) comes whole from the last run that has it.

    A (kernel, mode) is never split between runs, so every ratio of styles the report shows (over native, over
    raw, in one mode) is still two records of one run; each record keeps the index of its run (`run`), and the
    header lists the runs with the (kernel, mode) each contributed. Runs from another environment are refused."""
    if not paths:
        raise PerfFileError("nothing to join")
    files = [(str(path), read_perf_results(path)) for path in paths]
    first_name, first = files[0]
    for name, perf in files[1:]:
        for key in SAME_MACHINE:
            if perf.environment.get(key) != first.environment.get(key):
                raise PerfFileError(f"{name}: environment field {key!r} is {perf.environment.get(key)!r}, "
                                    f"{first.environment.get(key)!r} in {first_name}: not one machine's numbers")
    owner: dict[tuple[str, str], int] = {}
    for index, (_, perf) in enumerate(files):
        for record in perf.records:
            owner[(record.kernel, record.mode)] = index
    records = []
    for index, (_, perf) in enumerate(files):
        for record in perf.records:
            if owner[(record.kernel, record.mode)] == index:
                records.append(dataclasses.replace(record, run=index))
    joined_from = [{"source": name, "started": perf.header.get("started"), "command": perf.header.get("command"),
                    "matrix_results": perf.header.get("matrix_results"),
                    "kernel_modes": sorted({f"{k}/{m}" for (k, m), owner_index in owner.items() if owner_index == index})}
                   for index, (name, perf) in enumerate(files)]
    header = {**first.header, "joined_from": joined_from,
              "started": min(str(perf.header.get("started")) for _, perf in files)}
    return PerfFile(header=header, records=records)


def write_perf_file(perf: PerfFile, path: str | Path) -> Path:
    """The JSON Lines `harness perf` writes: the header, then one line per record."""
    path = Path(path)
    return write_text_atomic(path, json_line(perf.header) + "".join(json_line(r.to_record()) for r in perf.records))
