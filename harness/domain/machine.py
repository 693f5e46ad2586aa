"""What a kernel may require of the machine (`KernelSpec.requires`), and whether this machine has it.

One table, so every missing requirement becomes `skip` with the same clear reason wherever a cell
is decided. Tier-only requirements are known to the parent; those that depend on the GPU's compute
capability are known only inside the cell (the parent never initialises CUDA), where
`device_capability` reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
