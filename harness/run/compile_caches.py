"""Every cell compiles as a first compile does: no graph-level cache entry an earlier cell left is reused.

Inductor's FX graph cache and AOTAutograd's cache key a compiled graph on the graph and its inputs' metadata,
not on every property the compiled code assumed of them. A cell that compiled a graph for 16-byte-aligned
inputs left an entry that a later cell with the same graph on misaligned views (a storage offset) was handed:
its CUDA-graph replay raised `CUDA error: misaligned address` (docs/maintainers.md, "Order independence"). The
outcome depended on which cell ran earlier in the worker: the one order-dependent flip seen in 4,620 cells.

The content-addressed caches stay warm: Triton's (keyed on the kernel's source and its specialisation,
alignment included) and Inductor's code caches (keyed on the generated source). Set
TORCHINDUCTOR_FX_GRAPH_CACHE or TORCHINDUCTOR_AUTOGRAD_CACHE yourself to measure with those caches as you
configured them; the results header records what was in force.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

# (environment variable torch reads at import, config module, attribute)
GRAPH_CACHES: tuple[tuple[str, str, str], ...] = (
    ("TORCHINDUCTOR_FX_GRAPH_CACHE", "torch._inductor.config", "fx_graph_cache"),
    ("TORCHINDUCTOR_AUTOGRAD_CACHE", "torch._functorch.config", "enable_autograd_cache"),
)


def graph_caches_policy(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """What a run does with each graph cache: `off per cell` unless the user named a value, kept as given."""
    return {variable: environ.get(variable, "off per cell") for variable, _, _ in GRAPH_CACHES}


def disable_graph_caches() -> list[str]:
    """Turn the graph-level caches off in this process (torch already imported; worker mode restores configs
    after each cell, so every cell calls this). Returns the caches it turned off."""
    import importlib

    turned_off = []
    for variable, module_name, attribute in GRAPH_CACHES:
        if variable in os.environ:  # the user's choice
            continue
        module = importlib.import_module(module_name)
        if hasattr(module, attribute):
            setattr(module, attribute, False)
            turned_off.append(attribute)
    return turned_off
