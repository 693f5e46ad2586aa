"""What a kernel may require of the machine (`KernelSpec.requires`), and whether this machine has it.

One table, so every missing requirement becomes `skip` with the same clear reason wherever a cell
is decided. Tier-only requirements are known to the parent; those that depend on the GPU's compute
capability are known only inside the cell (the parent never initialises CUDA), where
`device_capability` reads it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Capability = tuple[int, int]


@dataclass(frozen=True)
class Requirement:
    name: str
    met: Callable[[str, Capability | None], bool]  # (tier, capability or None when not known yet) -> met
    missing: str  # the skip reason's wording, completed with where it was decided


def _compiled(tier: str, capability: Capability | None) -> bool:
    return tier == "gpu"


def _at_least(major: int, minor: int) -> Callable[[str, Capability | None], bool]:
    """On the GPU tier, a compute capability of at least major.minor (unknown yet counts as met: the cell
    decides again with it); the CPU tier's interpreter emulates the feature (measured, triton 3.7)."""

    def met(tier: str, capability: Capability | None) -> bool:
        return tier != "gpu" or capability is None or capability >= (major, minor)

    return met


REQUIREMENTS: dict[str, Requirement] = {
    "gpu": Requirement("gpu", _compiled, "needs a compiled GPU kernel; the Triton interpreter cannot run it"),
    "libdevice": Requirement("libdevice", _compiled,
                             "uses triton.language.extra.libdevice, which the Triton interpreter does not have"),
    "inline-asm": Requirement("inline-asm", _compiled,
                              "uses tl.inline_asm_elementwise (PTX), which the Triton interpreter cannot run"),
    "sm90": Requirement("sm90", _at_least(9, 0), "needs TMA tensor descriptors: compute capability 9.0 (Hopper) or newer"),
    "fp8": Requirement("fp8", _at_least(8, 9), "needs float8 (e4m3) support: compute capability 8.9 or newer"),
    # Met everywhere: the harness provides it for the cell (`provided`), as a program sets it once at its start.
    "triton-allocator": Requirement("triton-allocator", lambda tier, capability: True,
                                    "needs a Triton allocator (triton.set_allocator)"),
}



def missing_requirement(requires: tuple[str, ...], tier: str, capability: Capability | None) -> str | None:
    """The reason the first unmet requirement gives, or None when every one is met (or not yet decidable)."""
    for name in requires:
        requirement = REQUIREMENTS[name]
        if not requirement.met(tier, capability):
            where = f"compute capability {capability[0]}.{capability[1]}" if capability else "CPU interpreter tier"
            return f"{requirement.missing} ({where})"
    return None


def device_capability(tier: str) -> Capability | None:
    """The GPU's compute capability; call only where CUDA may be initialised (inside a cell)."""
    if tier != "gpu":
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return (major, minor)


def _torch_scratch(size: int, alignment: int, stream: int | None) -> Any:
    """Global scratch for a kernel that asks Triton for some (device-side TMA descriptors), from torch's allocator."""
    import torch

    return torch.empty(size, dtype=torch.int8, device="cuda")


@contextlib.contextmanager
def provided(requires: tuple[str, ...], tier: str) -> Iterator[None]:
    """What the harness sets up around a cell whose kernel requires it, and takes down after.

    `triton-allocator`: a kernel that makes TMA descriptors on the device (`tl.make_tensor_descriptor`) needs global
    scratch memory, which Triton asks of a process-wide allocator (`triton.set_allocator`; without one the launch
    raises "Kernel requires a runtime memory allocation, but no allocator was set"). A program sets it once; the
    harness sets a torch-backed one for the cell and puts the previous one back, so no later cell in the worker
    inherits it. The CPU tier's interpreter asks for no scratch. A fresh process (export_roundtrip, a consumer)
    gets none: a consumer has to set its own.
    """
    if "triton-allocator" not in requires or tier != "gpu":
        yield
        return
    import triton
    from triton.runtime import _allocation

    holder = getattr(_allocation, "_allocator", None)
    previous = holder.get() if holder is not None else getattr(_allocation, "_NULL_ALLOCATOR", None)
    triton.set_allocator(_torch_scratch)
    try:
        yield
    finally:
        if previous is not None:
            triton.set_allocator(previous)
