"""Turns an exception into the evidence a cell records: its type, its most specific line, the framework's
cause (a Dynamo graph break's reason and registry id) and its full traceback (docs/evidence.md)."""

from __future__ import annotations

import re
import traceback
from pathlib import Path
from typing import Any

MAX_LINE = 500


# Wrappers whose own message is a repr or a preamble: the evidence is the exception inside. InductorError
# (torch 2.6+, what a failing Inductor compile raises) subclasses BackendCompilerFailed but is named apart.
WRAPPERS = {"BackendCompilerFailed": "inner_exception", "InductorError": "inner_exception",
            "InterpreterError": "__cause__"}


def unwrap(error: BaseException) -> BaseException:
    """Look through Inductor's BackendCompilerFailed/InductorError and the Triton interpreter's InterpreterError."""
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


MAX_TRACEBACK = 20_000


def hidden_contexts(error: BaseException) -> list[BaseException]:
    """Exceptions torch raised over `from None`, which Python's traceback leaves out: Dynamo raises its
    TorchRuntimeError `from None` over the graph break whose cause (the user's failing line) is the evidence.
    Only torch's own exceptions are followed; elsewhere a hidden context may be unrelated."""
    hidden: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(hidden) < 4:
        if current.__cause__ is not None:
            current = current.__cause__
        elif (current.__suppress_context__ and current.__context__ is not None
              and type(current).__module__.startswith("torch.")):
            current = current.__context__
            hidden.append(current)
        else:
            current = None
    return hidden


def full_traceback(error: BaseException) -> str:
    """The whole traceback, chained causes included, as Python prints it, then any context torch hid with
    `from None` (hidden_contexts); a very long one keeps both ends."""
    import traceback

    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    for hidden in hidden_contexts(error):
        text += ("\nThe exception above was raised `from None` over this one (shown by the harness):\n\n"
                 + "".join(traceback.format_exception(type(hidden), hidden, hidden.__traceback__)))
    if len(text) <= MAX_TRACEBACK:
        return text
    half = MAX_TRACEBACK // 2
    return f"{text[:half]}\n... ({len(text) - MAX_TRACEBACK} characters left out) ...\n{text[-half:]}"


# Lines that frame an error rather than say what went wrong: never the evidence when another line is there.
BOILERPLATE = re.compile(
    r"^(Set TORCHDYNAMO_VERBOSE|For more details|from user code:|While executing|Original traceback|"
    r"backend='\w+' raised:|You can suppress this exception|Developer debug context:|Hint:|"
    r"To execute this test, run|Traceback \(most recent call last\))"
)
GRAPH_BREAK_ID = re.compile(r"/gb/(gb\d{4})\.html", re.IGNORECASE)
TRITON_POSITION = re.compile(r"^at (\d+:\d+):$")


def innermost(error: BaseException) -> BaseException:
    """Through the wrappers and every explicit `raise ... from` cause to the first error raised."""
    error = unwrap(error)
    seen = {id(error)}
    while isinstance(error.__cause__, BaseException) and id(error.__cause__) not in seen:
        error = unwrap(error.__cause__)
        seen.add(id(error))
    return error


def _explanation(lines: list[str]) -> str | None:
    """A Dynamo graph-break message's `Explanation:` text; where it quotes the error a fake run raised
    (`...: got RuntimeError("...")`), that error is the explanation."""
    for line in lines:
        if line.startswith("Explanation:"):
            explanation = line.removeprefix("Explanation:").strip()
            got = re.search(r"\): got (\w+(?:Error|Exception)\(.*)$", explanation)
            return got.group(1) if got else explanation
    return None


def failing_source(error: BaseException) -> str:
    """For an error without a message (a bare `assert` in torch): the source line that raised it and where."""
    frames = traceback.extract_tb(error.__traceback__) if error.__traceback__ else []
    if not frames:
        return ""
    frame = frames[-1]
    where = "/".join(Path(frame.filename).parts[-3:])
    return f"{(frame.line or '').strip()} ({where}:{frame.lineno})"[:MAX_LINE]


# A C++ compiler's diagnostic, as g++ and clang print it: "FILE:LINE:COLUMN: error: MESSAGE" (or "fatal error:").
COMPILER_ERROR = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:(?P<column>\d+):)? (?:fatal )?error: (?P<message>.+)$")
LINKER_ERROR = re.compile(r"(undefined reference to .+|cannot find -l\S+)$")
# The compiler driver's own, without a position: "g++: fatal error: Killed signal terminated program cc1plus".
DRIVER_ERROR = re.compile(r"^(?P<tool>[^\s:]+): (?:fatal )?error: (?P<message>.+)$")


def compiler_diagnostic(error: BaseException) -> str | None:
    """A failed C++ build's first error as the compiler gave it, with the file's name and position (else the symbol
    a failed link missed, else the compiler driver's own error); None for any other error. Inductor's
    CppCompileError keeps the compiler's output; the cause it is raised from is the CalledProcessError whose
    message is the command line, which starts with a temporary folder that differs from run to run and says
    nothing of what went wrong."""
    current: BaseException | None = error
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        output = getattr(current, "output", None) if type(current).__name__ == "CppCompileError" else None
        if isinstance(output, bytes):
            output = output.decode(errors="replace")
        if isinstance(output, str):
            lines = [line.strip() for line in output.splitlines()]
            for line in lines:
                found = COMPILER_ERROR.match(line)
                if found:
                    position = ":".join(part for part in (found["line"], found["column"]) if part)
                    return f"error: {found['message']} (at {Path(found['file']).name}:{position})"
            for line in lines:
                found = LINKER_ERROR.search(line)
                if found:
                    return f"error: {found.group(1)}"
            for line in lines:
                found = DRIVER_ERROR.match(line)
                if found:
                    return f"error: {found['message']} ({found['tool']})"
        inner = unwrap(current)
        current = inner if inner is not current else current.__cause__
    return None


def most_specific_line(error: BaseException) -> str:
    """The line that names the user-visible problem: the innermost cause's message, without framing lines;
    for a Dynamo graph break, `[GB id] type: explanation`; for a failed C++ build, the compiler's first error."""
    diagnostic = compiler_diagnostic(error)
    if diagnostic:
        return diagnostic[:MAX_LINE]
    inner = innermost(error)
    lines = [line.strip() for line in str(inner).splitlines() if line.strip()]
    useful = [line for line in lines if not BOILERPLATE.match(line)]
    if not useful:
        return first_line(error) or failing_source(inner)
    line = useful[0]
    triton_position = TRITON_POSITION.match(line)
    if triton_position and len(useful) > 2 and useful[-1] != "^":  # Triton's CompilationError: "at 12:4:", the
        # source, a caret under the failing expression, then the message
        line = f"{useful[-1]} (at {triton_position.group(1)})"
    elif line.endswith(":") and len(useful) > 1:
        line = f"{line} {useful[1]}"
    explanation = _explanation(useful)
    if explanation:
        line = f"{line}: {explanation}"
    graph_break = graph_break_id(inner)
    if graph_break:
        line = f"[{graph_break}] {line}"
    if inner is not unwrap(error):
        line = f"{type(inner).__name__}: {line}"
    return line[:MAX_LINE]


def graph_break_id(error: BaseException) -> str | None:
    """The graph-break registry id (`GB0007`) of a Dynamo error, from its registry link or its gb_type."""
    found = GRAPH_BREAK_ID.search(str(error))
    if found:
        return found.group(1).upper()
    gb_type = getattr(error, "gb_type", None)
    if not gb_type:
        return None
    try:
        from torch._dynamo.exc import _load_gb_type_to_gb_id_map  # private; absent before the registry existed
    except ImportError:
        return None
    return _load_gb_type_to_gb_id_map().get(gb_type)


def graph_break(error: BaseException) -> dict[str, Any] | None:
    """A Dynamo graph break's evidence for a cell's detail: its type, registry id and explanation; None otherwise."""
    inner = innermost(error)
    gb_type = getattr(inner, "gb_type", None)
    if not gb_type and not GRAPH_BREAK_ID.search(str(inner)):
        return None
    lines = [line.strip() for line in str(inner).splitlines() if line.strip()]
    return {"type": gb_type or (lines[0] if lines else ""), "id": graph_break_id(inner),
            "explanation": _explanation(lines)}


def graph_break_reasons(counted: dict[str, int]) -> list[dict[str, Any]]:
    """Dynamo's counters['graph_break'] (full message -> times) as evidence: [{"reason": "[GB id] type: explanation",
    "count": n}], most frequent first; for compile, which passes through a graph break but records why."""
    reasons = [{"reason": most_specific_line(Exception(message)), "count": int(count)}
               for message, count in counted.items()]
    return sorted(reasons, key=lambda r: -r["count"])
