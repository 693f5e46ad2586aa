"""How one cell's result is judged beside its control, and said in one line: shared by the pytest plugin,
the controller's crash records and the confirmation of changed cells (harness.run.confirm)."""

from __future__ import annotations

from harness.results import CellResult


def mark_env(result: CellResult, control: CellResult) -> None:
    """Make a non-passing style's result `env` when the control failed too, keeping its own outcome and the control's error."""
    if control.outcome in ("pass", "skip") or result.outcome in ("pass", "skip"):
        return
    result.control = {k: getattr(control, k) for k in ("outcome", "stage", "error_type", "error")}
    result.reason = (
        f"the native control is {control.outcome} in {result.pipeline} "
        f"({control.stage}: {control.error_type}: {control.error}); own outcome was {result.outcome}"
    )
    result.detail["own_outcome"] = result.outcome
    result.outcome = "env"


def evidence_line(result: CellResult) -> str:
    if result.outcome in ("skip", "env"):
        return result.reason or ""
    if result.outcome == "pass":
        return ""
    return f"{result.outcome} in stage {result.stage}: {result.error_type}: {result.error}"
