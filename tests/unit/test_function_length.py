"""No function in harness/ is longer than 60 lines (docs/architecture.md: small functions with names that say what
they do). Measured as Python's ast measures a definition: from its `def` line to its last line, docstring included."""

from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"
LONGEST = 60


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, length in lines) of every function and method in `source`, nested ones included."""
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1)
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None]


def test_no_harness_function_is_longer_than_sixty_lines():
    too_long = [f"{path.relative_to(HARNESS.parent)}:{line} {name}: {length} lines"
                for path in sorted(HARNESS.rglob("*.py"))
                for name, line, length in function_lengths(path.read_text(encoding="utf-8"))
                if length > LONGEST]
    assert not too_long, (f"functions over {LONGEST} lines: split each into named pieces that say what they do:\n"
                          + "\n".join(too_long))


def test_the_measure_counts_from_def_to_last_line_nested_ones_too():
    body = "\n".join(f"        x{n} = {n}" for n in range(59))
    source = f"def outer():\n    def inner():\n{body}\n    return inner\n\n\nasync def short():\n    pass\n"
    assert function_lengths(source) == [("outer", 1, 62), ("short", 65, 2), ("inner", 2, 60)]
