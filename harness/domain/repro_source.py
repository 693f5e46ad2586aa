"""The source of a KernelSpec's module as one standalone block: harness imports out, local helper modules in.

A reproducer must run where the harness is not installed. A spec module imports
`KernelSpec` from the harness (the script defines a stand-in record instead) and may
import helpers from its own package (`from kernels._elementwise import grid_1d`); those
helper modules are inlined above it, recursively, each once. Anything else it imports
(torch, triton, the user's own installed library) stays an import.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
from types import ModuleType

from harness.domain.spec import KernelSpec

HARNESS_NAMES_PROVIDED = {"KernelSpec"}  # the script defines these itself


class ReproSourceError(Exception):
    """A module whose source cannot be made standalone; the message names the module and the line."""


def _is_local(module_name: str, home_package: str) -> bool:
    return module_name == home_package or module_name.startswith(home_package + ".")


def _resolve(node: ast.ImportFrom, module: ModuleType) -> str:
    if not node.level:
        return node.module or ""
    package = module.__package__ or module.__name__.rpartition(".")[0]
    return importlib.util.resolve_name("." * node.level + (node.module or ""), package)


def _kept_lines(module: ModuleType, home_package: str, inlined: list[str], seen: set[str]) -> str:
    """The module's source with harness and local imports removed (local ones inlined into `inlined` first)."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError) as exc:
        raise ReproSourceError(f"{module.__name__}: its source cannot be read ({exc})") from None
    lines = source.splitlines()
    drop: set[int] = set()
    aliases: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom):
            name = _resolve(node, module)
            where = f"{module.__name__}:{node.lineno}"
            if name == "__future__":
                drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
            elif name == "harness" or name.startswith("harness."):
                extra = {alias.name for alias in node.names} - HARNESS_NAMES_PROVIDED
                if extra:
                    raise ReproSourceError(f"{where}: imports {', '.join(sorted(extra))} from the harness;"
                                           " a reproducer can only stand in for KernelSpec")
                drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
            elif _is_local(name, home_package):
                _inline(importlib.import_module(name), home_package, inlined, seen)
                aliases += [f"{alias.asname} = {alias.name}" for alias in node.names if alias.asname]
                if any(alias.name == "*" for alias in node.names):
                    raise ReproSourceError(f"{where}: `import *` from a local module cannot be inlined")
                drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "harness" or _is_local(alias.name, home_package):
                    raise ReproSourceError(f"{module.__name__}:{node.lineno}: `import {alias.name}` of a module a"
                                           " reproducer cannot import; use `from ... import name`")
    kept = [line for number, line in enumerate(lines) if number not in drop]
    return "\n".join(kept + aliases).strip() + "\n"


def _inline(module: ModuleType, home_package: str, inlined: list[str], seen: set[str]) -> None:
    if module.__name__ in seen:
        return
    seen.add(module.__name__)
    body = _kept_lines(module, home_package, inlined, seen)
    inlined.append(f"# ---- from {module.__name__} ----\n{body}")


def standalone_module_source(module: ModuleType) -> str:
    """The module and the local modules it imports, in dependency order, without harness imports."""
    home_package = module.__name__.split(".")[0]
    inlined: list[str] = []
    _inline(module, home_package, inlined, set())
    return "\n\n".join(inlined)


def kernel_spec_stand_in() -> str:
    """A `KernelSpec` record for the script: the real one's fields and defaults, no validation, no harness."""
    defaults = []
    for spec_field in dataclasses.fields(KernelSpec):
        if spec_field.default is not dataclasses.MISSING:
            defaults.append(f"    {spec_field.name!r}: {spec_field.default!r},")
    names = ", ".join(repr(f.name) for f in dataclasses.fields(KernelSpec))
    return "\n".join([
        "_SPEC_FIELDS = (" + names + ")",
        "_SPEC_DEFAULTS = {",
        *defaults,
        "}",
        "",
        "",
        "class KernelSpec:",
        '    """Stand-in for harness.domain.spec.KernelSpec: a plain record of the same fields and defaults."""',
        "",
        "    def __init__(self, *args, **fields):",
        "        self.__dict__.update({**_SPEC_DEFAULTS, **dict(zip(_SPEC_FIELDS, args)), **fields})",
        "",
        "    @property",
        "    def argument_names(self):",
        "        return tuple(name for name, _ in self.arguments)",
        "",
        "    @property",
        "    def differentiable_names(self):",
        "        if self.differentiable is not None:",
        "            return self.differentiable",
        "        return tuple(name for name, kind in self.arguments if kind is torch.Tensor)",
        "",
    ]) + "\n"
