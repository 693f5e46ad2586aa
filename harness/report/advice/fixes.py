"""Known fixes, each fired only by an evidence pattern in a failing cell (never asserted without one).

A rule reads the failing cell and, where it needs confirmation, the other cells of the
same results file (the same kernel in another style or pipeline). It returns the
evidence it matched, in words a reader can check in the file, or None.
docs/advise-and-repro.md prints this table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from harness.results import CellResult
from harness.vocab import cell_id

Cells = dict[str, CellResult]


@dataclass(frozen=True)
class FixRule:
    name: str
    evidence: str  # the pattern, for the docs and the legend
    fix: str
    matches: Callable[[CellResult, Cells], str | None]  # the evidence found, or None


@dataclass(frozen=True)
class Fix:
    rule: FixRule
    evidence: str


FAKE_DATA_POINTER = re.compile(r"Cannot access data pointer of Tensor \(e\.g\. FakeTensor")
MISSING_SCHEMA = re.compile(r"Could not find schema for (\S+?)\.?(\s|$)")
WRAP_TRITON_DECORATOR = "wrap_triton only works on functions annotated with triton.jit or triton.autotune"
NO_GRAD_FN = "does not require grad and does not have a grad_fn"
SETUP_CONTEXT = "must override the setup_context staticmethod"
DATA_DEPENDENT_GUARD = re.compile(r"GuardOnDataDependentSymNode|(?:extract specialized integer|guard) on data-dependent"
                                  r"|from data-dependent expression")
STRICT_COUNTERPART = {"export_nonstrict": "export_strict", "aoti": "aoti_strict"}
FAILED = ("fail", "wrong", "crash")


def _text(cell: CellResult) -> str:
    return f"{cell.error_type or ''}: {cell.error or ''}"


def _outcome(cells: Cells, kernel: str, style: str, pipeline: str) -> str | None:
    other = cells.get(cell_id(kernel, style, pipeline))
    return other.outcome if other else None


def _fake_tensor_data_pointer(cell: CellResult, cells: Cells) -> str | None:
    if cell.style not in ("raw", "autograd_function") or not FAKE_DATA_POINTER.search(_text(cell)):
        return None
    triton_op = _outcome(cells, cell.kernel, "triton_op", cell.pipeline)
    if triton_op not in (None, "pass"):
        return None  # triton_op was measured here and does not pass: not a known fix for this cell
    confirmed = "its triton_op cell passes" if triton_op else "its triton_op cell is not measured"
    return f"a launch on a FakeTensor's data pointer while tracing ({confirmed})"


def _strict_passes(cell: CellResult, cells: Cells) -> str | None:
    strict = STRICT_COUNTERPART.get(cell.pipeline)
    if strict is None or _outcome(cells, cell.kernel, cell.style, strict) != "pass":
        return None
    return f"the same kernel and style passes {strict}"


def _module_attribute_call(cell: CellResult, cells: Cells) -> str | None:
    if cell.style != "autograd_function" or cell.detail.get("call_site") != "module_attribute":
        return None
    return "the failing call is Fn.apply held as an nn.Module attribute (detail.call_site)"


def _schema_not_registered(cell: CellResult, cells: Cells) -> str | None:
    found = MISSING_SCHEMA.search(_text(cell))
    if cell.pipeline not in ("aoti_fresh_process", "export_roundtrip_bare") or not found:
        return None
    return f"the consuming process has no schema for {found.group(1)}"


def _decorator_order(cell: CellResult, cells: Cells) -> str | None:
    return f"wrap_triton refused the kernel object ({cell.stage} stage)" if WRAP_TRITON_DECORATOR in _text(cell) else None


def _no_grad_fn(cell: CellResult, cells: Cells) -> str | None:
    if cell.style != "raw" or NO_GRAD_FN not in _text(cell):
        return None
    return "the raw launch's output has no grad_fn"


def _setup_context(cell: CellResult, cells: Cells) -> str | None:
    return "functorch asks for setup_context" if SETUP_CONTEXT in _text(cell) else None


def _data_dependent_guard(cell: CellResult, cells: Cells) -> str | None:
    found = DATA_DEPENDENT_GUARD.search(_text(cell))
    if not found:
        return None
    return f"tracing asked for the concrete value of a data-dependent size ('{found.group(0)}', {cell.stage} stage)"


FIX_RULES: tuple[FixRule, ...] = (
    FixRule("triton_op", "raw or autograd_function; error 'Cannot access data pointer of Tensor (e.g. FakeTensor,"
            " ...)'; the kernel's triton_op cell in that pipeline passes or was not measured",
            "make it a `torch.library.triton_op` (launch through `wrap_triton`), so tracing sees an op, not a pointer",
            _fake_tensor_data_pointer),
    FixRule("strict", "export_nonstrict (or aoti) fails and the same kernel and style passes export_strict"
            " (or aoti_strict)", "pass `strict=True` to `torch.export.export`", _strict_passes),
    FixRule("apply_directly", "autograd_function fails with detail.call_site == 'module_attribute'"
            " (recorded by the call-site axis)",
            "call `Fn.apply` directly instead of through a module attribute", _module_attribute_call),
    FixRule("import_op_module", "aoti_fresh_process or export_roundtrip_bare; error 'Could not find schema for NS::OP'",
            "import the module that registers the op in the consuming process before loading", _schema_not_registered),
    FixRule("outer_decorator", "error 'wrap_triton only works on functions annotated with triton.jit or triton.autotune'",
            "make `@triton.autotune` (or `@triton.jit`) the outermost decorator: `wrap_triton` refuses anything on"
            " top of them (`@triton.heuristics`, a library's own wrapper such as FlagGems' `@libentry()`), so"
            " reorder, or hand `wrap_triton` the object inside (`kernel.fn`)", _decorator_order),
    FixRule("autograd", "raw; error 'does not require grad and does not have a grad_fn'",
            "a raw launch is invisible to autograd: give it a backward (`torch.library.register_autograd` on a"
            " triton_op/custom_op, or an autograd.Function)", _no_grad_fn),
    FixRule("setup_context", "error 'must override the setup_context staticmethod'",
            "split `forward(ctx, ...)` into `forward(...)` and `setup_context(ctx, inputs, output)`", _setup_context),
    FixRule("symint_size", "error 'GuardOnDataDependentSymNode' / 'Could not extract specialized integer from"
            " data-dependent expression'",
            "keep a size that only the data knows a SymInt: `size = count.item()` then `torch._check(size >= 0)`, not"
            " `int(count.item())` (kernels/data_dependent_output.py against data_dependent_output_int.py)",
            _data_dependent_guard),
)


def fixes_for(cell: CellResult, cells: Cells) -> list[Fix]:
    """Every rule whose evidence pattern this non-passing cell matches; nothing for a pass."""
    if cell.outcome not in FAILED:
        return []
    found = []
    for rule in FIX_RULES:
        evidence = rule.matches(cell, cells)
        if evidence:
            found.append(Fix(rule, evidence))
    return found
