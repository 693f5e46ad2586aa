"""A failed stage as a cell records it: the outcome, the stage, the error's type and line.

One function for the run (harness.run.cell) and for a reproducer (harness.domain.repro_main), so a
script ends with exactly the outcome and error line the harness recorded for its cell.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.domain.checking import MismatchError
from harness.domain.evidence import error_type, most_specific_line
from harness.domain.pipelines.common import StageFailure


@dataclass(frozen=True)
class FailureVerdict:
    outcome: str  # "wrong" (ran, did not match) or "fail" (raised)
    stage: str
    error_type: str
    error: str


def failure_verdict(failure: StageFailure) -> FailureVerdict:
    outcome = "wrong" if isinstance(failure.error, MismatchError) else "fail"
    return FailureVerdict(outcome, failure.stage, error_type(failure.error),
                          failure.prefix + most_specific_line(failure.error))
