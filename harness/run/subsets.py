"""Named cell subsets: the CPU-tier CI subset is data here, so CI, the README and the tests ask the same cells."""

from __future__ import annotations

# Every kernel and every style, one or two pipelines per family (AOTInductor left out: its C++ build costs
# 20-40 s a cell on 2 cores). It asks what the CPU tier can tell apart: inference, training, generated
# inputs, tracing by Dynamo (compile, fullgraph), export without Dynamo, and the operator checks.
CI_PIPELINES: tuple[str, ...] = (
    "eager",
    "eager_backward",
    "eager_inputs",
    "compile_fullgraph",
    "export_nonstrict",
    "opcheck",
)

SUBSETS: dict[str, tuple[str, ...]] = {"ci": CI_PIPELINES}


def subset_pipelines(name: str) -> tuple[str, ...]:
    """The pipelines of a named subset; a KeyError names the known ones."""
    if name not in SUBSETS:
        raise KeyError(f"unknown subset {name!r}; known: {', '.join(SUBSETS)}")
    return SUBSETS[name]
