"""triton-compat-matrix: which way of wrapping a Triton kernel survives which PyTorch pipeline.

Kept import-light on purpose: the report side reads results files on machines without torch, and the
fresh-process loaders must not pull in kernels. `from harness import KernelSpec` (the plug-in API) imports
torch only when asked for.
"""

from typing import Any

from harness.version import __version__

__all__ = ["KernelSpec", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "KernelSpec":
        from harness.domain.spec import KernelSpec  # deferred: imports torch; `import harness` stays light

        return KernelSpec
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
