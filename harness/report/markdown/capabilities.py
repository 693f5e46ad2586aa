"""The chart's rows and columns: the one table that says what each capability means.

A capability is a rule over pipelines: its chart cell aggregates every cell
(over kernels) of that style in any of those pipelines. The rendered report's
rule footer is generated from this table, so the rules cannot drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.vocab import CONTROL_STYLE, STYLES


@dataclass(frozen=True)
class Capability:
    name: str
    pipelines: tuple[str, ...]
    from_tutorial: bool  # a row of the PyTorch tutorial's chart, or one it leaves out
    why: str = ""


@dataclass(frozen=True)
class Column:
    label: str
    style: str
    from_tutorial: bool


TUTORIAL = "Using User-Defined Triton Kernels with torch.compile"

CAPABILITIES: tuple[Capability, ...] = (
    Capability("Supports inference", ("eager",), True),
    Capability(
        "Supports training",
        ("eager_backward", "compile_fullgraph_backward"),
        True,
        "backward in eager and under torch.compile(fullgraph=True)",
    ),
    Capability("Supports torch.compile", ("compile",), True),
    Capability("Supports torch.compile(fullgraph=True)", ("compile_fullgraph",), True),
    Capability(
        "Does torch.compile trace into the implementation",
        ("compile_visible",),
        True,
        "the user kernel appears in Inductor's generated code",
    ),
    Capability(
        "Supports AOTInductor",
        ("aoti", "aoti_strict"),
        True,
        "both the non-strict and the strict export path: the tutorial's Yes for raw kernels"
        " depends on strict export, and torch's default strictness has changed across versions",
    ),
    Capability(
        "Supports PyTorch subsystems like FlopCounterMode, CPU Fallback, Tensor Subclasses",
        ("flop_counter", "cpu_fallback", "tensor_subclass"),
        True,
    ),
    Capability("Supports torch.export (strict)", ("export_strict",), False),
    Capability("Supports torch.export (non-strict)", ("export_nonstrict",), False),
    Capability(
        "Supports dynamic shapes",
        ("compile_dynamic", "export_dynamic"),
        False,
        "torch.compile(dynamic=True) and torch.export with dynamic dims",
    ),
    Capability("Supports CUDA graphs", ("cudagraphs",), False),
    Capability("Supports torch.vmap", ("vmap",), False),
    Capability("Passes torch.library.opcheck", ("opcheck",), False),
    Capability(
        "Supports AOTInductor in a fresh process",
        ("aoti_fresh_process",),
        False,
        "the package loads and runs in a process that never imported the kernel's module",
    ),
    Capability(
        "Ships as a saved ExportedProgram",
        ("export_roundtrip",),
        False,
        "export (strict, else non-strict), torch.export.save, then load and run in a fresh process that imports"
        " the kernel's module first, as a library's user would",
    ),
    Capability(
        "Saved ExportedProgram loads without importing the kernel's module",
        ("export_roundtrip_bare",),
        False,
        "the same file, loaded and run in a fresh process that imports only torch: is the file alone enough",
    ),
)

# The label each style's column carries; the tutorial's three columns come first, in its order.
TUTORIAL_COLUMNS: dict[str, str] = {
    "raw": "Triton kernel with no explicit torch.library wrapper",
    "triton_op": "torch.library.triton_op",
    "custom_op": "torch.library.custom_op",
}
EXTRA_LABELS: dict[str, str] = {
    "autograd_function": "torch.autograd.Function",
    "wrap_triton": "torch.library.wrap_triton, no triton_op",
    CONTROL_STYLE: "Pure PyTorch (control)",
}


def _columns() -> tuple[Column, ...]:
    """One column per style of the vocabulary, so a new style is a new column without editing this file:
    the tutorial's columns, then the other styles in vocabulary order, then the control."""
    tutorial = [Column(label, style, True) for style, label in TUTORIAL_COLUMNS.items()]
    others = [style for style in STYLES if style not in TUTORIAL_COLUMNS and style != CONTROL_STYLE]
    extra = [Column(EXTRA_LABELS.get(style, style), style, False) for style in [*others, CONTROL_STYLE]]
    return tuple(tutorial + extra)


COLUMNS: tuple[Column, ...] = _columns()
