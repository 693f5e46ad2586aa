"""The shared vocabulary (docs/architecture.md): every name a style, pipeline, outcome or stage may take."""

from __future__ import annotations

# `wrap_triton`: a bare torch.library.wrap_triton launch in a plain function, no triton_op around it.
STYLES: tuple[str, ...] = ("native", "raw", "autograd_function", "custom_op", "triton_op", "wrap_triton")

# pytest suites in matrix/ mirror these families, one module each.
PIPELINE_FAMILIES: dict[str, tuple[str, ...]] = {
    "eager": ("eager", "eager_backward", "eager_inputs"),
    "compile": (
        "compile",
        "compile_fullgraph",
        "compile_fullgraph_backward",
        "compile_dynamic",
        "cudagraphs",
        "compile_visible",
    ),
    "export": ("export_strict", "export_nonstrict", "export_dynamic", "export_roundtrip", "export_roundtrip_bare"),
    "aoti": ("aoti", "aoti_strict", "aoti_fresh_process"),
    "subsystems": ("flop_counter", "cpu_fallback", "tensor_subclass", "vmap", "opcheck"),
}

# Every pipeline, in the order of the families (the order of reports and runs).
PIPELINES: tuple[str, ...] = tuple(p for family in PIPELINE_FAMILIES.values() for p in family)

# `flaky`: with --repeat N, the N runs of a cell did not all give the same outcome.
OUTCOMES: tuple[str, ...] = ("pass", "wrong", "fail", "crash", "timeout", "skip", "env", "flaky")
STAGES: tuple[str, ...] = ("build", "trace", "compile", "load", "run", "check")
CONTROL_STYLE = "native"
TIERS: tuple[str, ...] = ("gpu", "cpu")


# The call-site axis (docs/call-sites.md): how the user's code calls a style's op, asked only in the pipelines where
# that can change the answer, and reported as its own table. A call-site cell's style is written `style@site`.
CALL_SITES: dict[str, tuple[str, ...]] = {
    "autograd_function": ("direct", "module_alias", "module_attribute"),
    "raw": ("free_function", "module_forward"),
}
CALL_SITE_PIPELINES: tuple[str, ...] = ("compile", "compile_fullgraph", "export_strict", "export_nonstrict", "aoti")
CALL_SITE_STYLES: tuple[str, ...] = tuple(f"{style}@{site}" for style, sites in CALL_SITES.items() for site in sites)


def split_style(name: str) -> tuple[str, str]:
    """`autograd_function@module_attribute` -> (`autograd_function`, `module_attribute`); a plain style -> (style, "")."""
    style, _, site = name.partition("@")
    return style, site


def cell_id(kernel: str, style: str, pipeline: str, call_site: str = "") -> str:
    """The id every file, report and pytest node uses for one cell: `kernel/style/pipeline`, or
    `kernel/style@site/pipeline` for a call-site cell."""
    return f"{kernel}/{style}@{call_site}/{pipeline}" if call_site else f"{kernel}/{style}/{pipeline}"


def split_cell_id(text: str) -> tuple[str, str, str]:
    kernel, style, pipeline = text.split("/")
    return kernel, style, pipeline
