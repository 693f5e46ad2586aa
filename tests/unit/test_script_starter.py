"""The reproducer scripts' starter (tests/integration/script_starter.py) imports at least what the harness's zygote
imports before it forks a worker: a script then starts as the cell it reproduces started, and a module the harness
adds to its warm-up cannot be left out of the scripts' (test_repro.py holds each script's last line to its cell's)."""

import ast
from pathlib import Path

from harness.run.startup.warm_imports import WARM_IMPORTS

STARTER = Path(__file__).resolve().parents[1] / "integration" / "script_starter.py"


def _starter_imports() -> tuple[str, ...]:
    """The starter's WARM_IMPORTS, read from its source: importing it would import torch, Dynamo and Inductor."""
    for node in ast.parse(STARTER.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "WARM_IMPORTS" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError(f"{STARTER}: no WARM_IMPORTS assignment")


def test_the_starter_imports_what_the_zygote_imports():
    missing = set(WARM_IMPORTS) - set(_starter_imports())
    assert missing == set(), f"script_starter.py lacks the zygote's warm imports {sorted(missing)}"


def test_the_starter_imports_nothing_of_the_harness():
    assert not [name for name in _starter_imports() if name.split(".")[0] in ("harness", "kernels", "matrix")]
