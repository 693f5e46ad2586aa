"""Small valid results files for the report tests: each test states only the cells it cares about."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from harness.results import SCHEMA_VERSION, CellResult, ResultsFile
from harness.vocab import PIPELINES, STYLES, cell_id

GOLDEN = Path(__file__).parent / "golden"

GPU_ENVIRONMENT: dict[str, Any] = {
    "python": "3.11.7",
    "torch": "2.11.0+cu130",
    "triton": "3.5.0",
    "cuda": "13.0",
    "gpu": "NVIDIA H100 80GB HBM3",
    "driver": "580.65",
    "tier": "gpu",
    "interpreter": False,
    "os": "Linux-6.8.0-x86_64",
    "ld_preload": "",
}


def environment(**changes: Any) -> dict[str, Any]:
    """The GPU environment with some fields changed (tier="cpu", torch="2.6.0", ...)."""
    return {**GPU_ENVIRONMENT, **changes}


def header(env: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A fixed header: no clocks, no real version, so goldens stay byte-identical."""
    return {
        "record": "header",
        "schema": SCHEMA_VERSION,
        "environment": GPU_ENVIRONMENT if env is None else env,
        "started": "2025-01-02T03:04:05+00:00",
        "harness_version": "0.0.test",
        "command": ["python", "-m", "harness", "run", "--tier", "gpu"],
        **extra,
    }


def cell(kernel: str, style: str, pipeline: str, outcome: str = "pass", **fields: Any) -> CellResult:
    """One cell; non-pass cells get a plausible stage and error unless the test gives its own."""
    if outcome in ("fail", "wrong", "crash") and "error" not in fields:
        fields.setdefault("stage", "run" if outcome != "wrong" else "check")
        fields.setdefault("error_type", "RuntimeError" if outcome == "fail" else "AssertionError")
        fields["error"] = f"{kernel} {style} {pipeline} went {outcome}"
    if outcome in ("skip", "env", "timeout"):
        fields.setdefault("reason", f"{pipeline} cannot be asked here")
    return CellResult(id=cell_id(kernel, style, pipeline), kernel=kernel, style=style, pipeline=pipeline,
                      outcome=outcome, **fields)


def results(cells: Iterable[CellResult], env: dict[str, Any] | None = None, **extra: Any) -> ResultsFile:
    return ResultsFile(header=header(env, **extra), cells=list(cells))


def write_results(path: Path, cells: Iterable[CellResult], env: dict[str, Any] | None = None,
                  **extra: Any) -> Path:
    """A results file as the engine writes it: a header line, then one JSON line per cell."""
    lines = [header(env, **extra)] + [c.to_record() for c in cells]
    path.write_text("".join(json.dumps(record, sort_keys=True) + "\n" for record in lines), encoding="utf-8")
    return path

# (kernel, style, pipeline) -> the fields of a cell that did not simply pass.
MIXED_SPECIAL: dict[tuple[str, str, str], dict[str, Any]] = {
    ("add", "raw", "eager_backward"): {
        "outcome": "fail", "stage": "run", "error_type": "RuntimeError",
        "error": "element 0 of tensors does not require grad | <b>x</b>",
    },
    ("softmax", "raw", "compile_fullgraph"): {
        "outcome": "fail", "stage": "trace", "error_type": "torch._dynamo.exc.Unsupported",
        "error": "call_function `triton_kernel_wrapper`\nsecond line",
    },
    ("add", "custom_op", "compile_visible"): {
        "outcome": "fail", "stage": "check", "error_type": "AssertionError",
        "error": "kernel not found in Inductor output",
    },
    ("softmax", "custom_op", "compile_visible"): {
        "outcome": "fail", "stage": "check", "error_type": "AssertionError",
        "error": "kernel not found in Inductor output",
    },
    ("add", "triton_op", "vmap"): {
        "outcome": "wrong", "stage": "check", "error_type": "AssertionError", "error": "max abs diff 0.5",
    },
    ("softmax", "raw", "aoti_fresh_process"): {
        "outcome": "crash", "stage": "load", "error_type": "SIGSEGV", "error": "worker died with signal 11",
    },
    ("softmax", "autograd_function", "export_dynamic"): {
        "outcome": "timeout", "stage": "compile", "reason": "exceeded 300 s",
    },
    ("add", "autograd_function", "opcheck"): {
        "outcome": "env", "stage": "run", "reason": "native control failed: opcheck needs an op",
    },
}


def mixed_cells() -> list[CellResult]:
    """Two kernels, every style and pipeline; cudagraphs skipped, and each other outcome somewhere."""
    cells = []
    for kernel in ("add", "softmax"):
        for style in STYLES:
            for pipeline in PIPELINES:
                fields = MIXED_SPECIAL.get((kernel, style, pipeline), {})
                if pipeline == "cudagraphs":
                    fields = {"outcome": "skip", "reason": "no CUDA graphs on CPU"}
                cells.append(cell(kernel, style, pipeline, **fields))
    return cells


def check_golden(name: str, text: str) -> None:
    """Compare with golden/<name>; a missing golden fails, as a stale one does.

    After an intended change to the output (or for a new golden), regenerate them explicitly with
    `UPDATE_GOLDENS=1 python3 -m pytest tests/unit/report` (again, until it writes nothing), review the diff and
    commit it: a test that writes one skips, saying which file it wrote, so that a regenerating run is never
    mistaken for a passing one.
    """
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDENS") == "1" and not (path.exists() and path.read_text(encoding="utf-8") == text):
        # one golden per pass: a test that checks two writes the first, skips, and writes the next one on a second pass
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        pytest.skip(f"wrote {path}; review and commit it")
    if not path.exists():
        pytest.fail(f"{path} is missing; `UPDATE_GOLDENS=1 python3 -m pytest tests/unit/report` writes it (then review it)")
    assert text == path.read_text(encoding="utf-8"), f"{path} is stale; UPDATE_GOLDENS=1 regenerates it"
