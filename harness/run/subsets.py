"""The default selection of each tier: what `harness run` asks when no pipeline is named, and why.

On the GPU the default is the whole matrix. On the CPU tier (Triton's interpreter, a CI machine) it is every
kernel and every style in the pipelines the interpreter answers in minutes and that tell the styles apart:
inference, training, tracing by Dynamo (fullgraph), export without Dynamo, and the operator checks.
Left out there: generated-input sweeps (`eager_inputs`, hundreds of interpreted launches per cell), AOTInductor
(a C++ build per cell) and the pipelines that mean nothing on a CPU. `--all` asks every pipeline.
"""

from __future__ import annotations

from harness.vocab import CALL_SITE_STYLES, PIPELINES, STYLES

CPU_DEFAULT_PIPELINES: tuple[str, ...] = (
    "eager",
    "eager_backward",
    "compile_fullgraph",
    "export_nonstrict",
    "opcheck",
)

DEFAULT_WHY = {
    "gpu": "the whole matrix",
    "cpu": "every kernel and style in the pipelines the interpreter answers in minutes "
           "(no generated-input sweeps, no AOTInductor C++ builds)",
}


def default_pipelines(tier: str) -> tuple[str, ...]:
    return CPU_DEFAULT_PIPELINES if tier == "cpu" else PIPELINES


def describe_default(tier: str) -> str:
    """One line for the start of a run that asked no pipeline."""
    pipelines = default_pipelines(tier)
    named = "every pipeline" if pipelines == PIPELINES else ", ".join(pipelines)
    return f"default selection ({tier} tier): {DEFAULT_WHY[tier]}: {named}; ask for every pipeline with --all"


def default_styles(tier: str) -> tuple[str, ...]:
    """Every style, and on the GPU every call site too. On the CPU tier Dynamo skips the interpreter's launch, so
    every call site of a style fails alike there: the call-site axis is asked by name (`-s raw@module_forward`)
    or with --all."""
    return STYLES if tier == "cpu" else STYLES + CALL_SITE_STYLES
