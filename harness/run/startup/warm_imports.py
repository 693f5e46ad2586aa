"""What most cells import lazily, imported once in the run's zygote (harness.run.startup.loader_zygote) before it forks.

A module that imports nothing of the harness: the zygote and the tests name it without pulling in isolation.
Each forked worker or loader would otherwise pay seconds for these imports (docs/maintainers.md, "Isolation").
"""

from __future__ import annotations

import importlib

WARM_IMPORTS = ("torch._dynamo", "torch._inductor.compile_fx")


def warm_imports() -> None:
    """Import WARM_IMPORTS in this process, so that every child forked from it has them already."""
    for name in WARM_IMPORTS:
        importlib.import_module(name)
