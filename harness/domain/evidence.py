"""Turns an exception into the evidence a cell records: its type and one informative first line."""

from __future__ import annotations

MAX_LINE = 500


# Wrappers whose own message is a repr or a preamble: the evidence is the exception inside.
WRAPPERS = {"BackendCompilerFailed": "inner_exception", "InterpreterError": "__cause__"}


def unwrap(error: BaseException) -> BaseException:
    """Look through Inductor's BackendCompilerFailed and the Triton interpreter's InterpreterError."""
    for _ in range(4):
        attribute = WRAPPERS.get(type(error).__name__)
        inner = getattr(error, attribute, None) if attribute else None
        if not isinstance(inner, BaseException):
            return error
        error = inner
    return error


def error_type(error: BaseException) -> str:
    inner = unwrap(error)
    if inner is not error:
        return f"{type(error).__name__}({type(inner).__name__})"
    return type(error).__name__


def first_line(error: BaseException) -> str:
    """The first non-empty line; a line that only introduces the next one (ends with ':') takes it along."""
    lines = [line.strip() for line in str(unwrap(error)).splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[0]
    if line.endswith(":") and len(lines) > 1:
        line = f"{line} {lines[1]}"
    return line[:MAX_LINE]
