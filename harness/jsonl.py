"""JSON Lines written one record at a time (matrix and perf results): each line as an object, with a torn last
line (a writer killed mid-line) told apart from corruption. No torch; used by harness.results and
harness.perf_results, which add what their records mean."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_line(record: dict[str, Any]) -> str:
    """One record as the line every results writer writes: keys sorted, no spaces after separators (the published
    GPU results are thousands of such lines, and the spaces were 7% of them)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"


def _split_lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes, is an unterminated last line): a run killed mid-write leaves exactly that."""
    lines = data.split(b"\n")
    last_terminated = data.endswith(b"\n")
    if last_terminated:
        lines = lines[:-1]
    for number, line in enumerate(lines, start=1):
        yield number, line, number == len(lines) and not last_terminated


def _read_bytes(path: Path, kind: str, error: type[Exception]) -> bytes:
    if not path.exists():
        raise error(f"{path}: no such {kind}")
    if path.is_dir():
        raise error(f"{path}: is a folder, not a {kind}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if b"\0" in data:
        raise error(f"{path}: not a {kind} (binary data, not JSON Lines)")
    return data


def json_objects(path: str | Path, kind: str, error: type[Exception]) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
    """([(line number, object)], whether a torn last line was dropped); every problem is `error` of one line naming
    the file (and the line), `kind` saying what the file should have been ("results file", "perf results file").

    A torn last line is dropped only after a first good line: a file whose first line does not parse is not one."""
    path = Path(path)
    found: list[tuple[int, dict[str, Any]]] = []
    dropped = False
    for number, raw, unterminated in _split_lines(_read_bytes(path, kind, error)):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if unterminated and found:
                dropped = True
                continue
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8 text"
            if not found:
                raise error(f"{path}: not a {kind} (line {number} is not JSON: {why})") from None
            raise error(f"{path}:{number}: not a JSON line ({why}); a torn or corrupt line is tolerated only as the "
                        "last line") from None
        if not isinstance(record, dict):
            raise error(f"{path}:{number}: a line is not a JSON object")
        found.append((number, record))
    return found, dropped
