"""What a matrix cell's record (harness.results) and a perf cell's record (harness.perf_results) share.

Both are plain dataclasses that cross process boundaries as dicts and are written one JSON line each under a
header; each file type adds what its records mean and how they are checked. Imports nothing of the harness.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

RecordType = TypeVar("RecordType", bound="PlainRecord")


class PlainRecord:
    """A dataclass written as `{"record": KIND, **fields}`; read back ignoring fields it does not know (a newer
    harness may add some)."""

    RECORD_KIND: ClassVar[str]

    def to_record(self) -> dict[str, Any]:
        return {"record": self.RECORD_KIND, **dataclasses.asdict(self)}  # type: ignore[call-overload]

    @classmethod
    def from_record(cls: type[RecordType], record: dict[str, Any]) -> RecordType:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in record.items() if k in names})


class HeaderedFile:
    """A records file read whole: its header (the environment it was measured in) and its records."""

    header: dict[str, Any]
    dropped_torn_line: bool  # the last line was torn (a killed run) and was dropped

    @property
    def environment(self) -> dict[str, Any]:
        return self.header.get("environment", {})
