"""Kernels registered over operators that already exist (an aten operator's CUDA kernel replaced, as FlagGems'
`flag_gems.enable()` does): which registrations change what a later call of an existing operator computes.

Two places ask it: the worker's global-state guard, after each cell (harness.run.isolation.global_state), and the loading of
a plug-in (harness.domain.registry), because a plug-in that replaces aten's kernels at import makes the `native`
control run the plug-in's kernels instead of PyTorch's own, so every `env` verdict would judge against the wrong
control, silently.
"""

from __future__ import annotations

from typing import Any

from harness.vocab import STYLES

OWN_NAMESPACES = tuple(f"tcm_{style}" for style in STYLES)  # the styles' operators, dropped between cells
_OWN_PREFIXES = tuple(f"{name}{separator}" for name in OWN_NAMESPACES for separator in ("::", "/"))
_OWN_START = "tcm_"  # how every one of OWN_NAMESPACES starts

# The dispatch keys a kernel of a device or of autograd sits under: a kernel added there to an existing operator
# changes what later cells compute. torch's own lazy registrations use other keys (functorch registers batching
# rules on aten operators under FuncTorchBatched at the first vmap, measured on torch 2.11).
COMPUTING_KEYS = frozenset({"CPU", "CUDA", "Meta", "Autograd", "AutogradCPU", "AutogradCUDA", "Default",
                            "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                            "CompositeExplicitAutogradNonFunctional"})


def registrations(library: Any) -> frozenset[str]:
    """Operators defined and kernels registered through torch.library, less the harness's own per-style namespaces."""
    entries = set(getattr(library, "_impls", ())) | set(getattr(library, "_defs", ()))
    # the test `namespace(entry) not in OWN_NAMESPACES`, by prefix: a worker asks it of some 2,000 entries twice a cell,
    # and only an entry that starts as every own namespace does ("tcm_") is tested further
    return frozenset(entry for entry in entries
                     if not entry.startswith(_OWN_START) or not (entry.startswith(_OWN_PREFIXES) or entry in OWN_NAMESPACES))


def namespace(entry: str) -> str:
    """`ns::op` (a definition) and `ns/op/key` (a kernel) both name their namespace first."""
    return entry.replace("::", "/").split("/")[0]


def _operator(entry: str) -> str:
    """`ns/op.overload/key` -> `ns::op`, as a definition names it."""
    parts = entry.split("/")
    return f"{parts[0]}::{parts[1].split('.')[0]}" if len(parts) > 1 else entry


def overrides(before: frozenset[str], after: frozenset[str]) -> list[str]:
    """Registrations that change an operator that existed before: a device or autograd kernel added to an aten or
    prims operator or to one already defined, or any registration removed. An operator defined in the same interval
    with its kernels (a torch module imported lazily: torch._inductor defines prims::_low_memory_max_pool_* when fla
    imports it) changes no operator a later call uses."""
    defined = {entry for entry in before if "::" in entry}
    new_operators = {entry for entry in after - before if "::" in entry}  # defined now, with their kernels: no override
    added = [entry for entry in sorted(after - before) if "::" not in entry and entry.split("/")[-1] in COMPUTING_KEYS
             and _operator(entry) not in new_operators
             and (namespace(entry) in ("aten", "prims") or _operator(entry) in defined)]
    return added + [f"removed {entry}" for entry in sorted(before - after)]
