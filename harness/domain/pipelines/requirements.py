"""What a pipeline needs before it can be asked at all; decided without building anything.

The parent checks this before it spends a process on a cell, and the cell checks it
again (a cell may be run on its own), so a cell that cannot be asked is always `skip`
with the same reason.
"""

from __future__ import annotations

from harness.domain.machine import Capability, missing_requirement
from harness.domain.spec import KernelSpec

NEEDS_GPU: dict[str, str] = {
    "cudagraphs": "CUDA graphs need a GPU",
    "cpu_fallback": "a CPU fallback means nothing when every tensor is already on the CPU",
}
NEEDS_BACKWARD: tuple[str, ...] = ("eager_backward", "compile_fullgraph_backward")


def skip_reason(spec: KernelSpec, pipeline: str, tier: str, capability: Capability | None = None) -> str | None:
    """Why the cell cannot be asked here, or None. `capability` is the GPU's, known only inside a cell."""
    missing = missing_requirement(spec.requires, tier, capability)
    if missing:
        return f"kernel {spec.name} {missing}"
    if pipeline in NEEDS_GPU and tier != "gpu":
        return f"{NEEDS_GPU[pipeline]} (CPU interpreter tier)"
    if pipeline in NEEDS_BACKWARD and not spec.has_backward:
        return f"kernel {spec.name} declares no backward"
    return None
