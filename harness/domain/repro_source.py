"""The source of a KernelSpec's module as one standalone block: harness imports out, local helper modules in.

A reproducer must run where the harness is not installed. A spec module imports
`KernelSpec` (and maybe `ToleranceOverride`) from the harness: those imports are removed and
reported, and the script copies the harness's own definitions of those names
(harness.domain.repro_closure). It may import helpers from its own package
(`from kernels._elementwise import grid_1d`); those helper modules are inlined above it,
recursively, each once. Anything else it imports (torch, triton, the user's own installed
library) stays an import.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
from collections.abc import Callable
from types import ModuleType

CATALOGUE = "kernels"  # the harness's built-in kernels: inlined like the spec's own package


class ReproSourceError(Exception):
    """A module whose source cannot be made standalone; the message names the module and the line."""


def _resolve(node: ast.ImportFrom, module: ModuleType) -> str:
    if not node.level:
        return node.module or ""
    package = module.__package__ or module.__name__.rpartition(".")[0]
    return importlib.util.resolve_name("." * node.level + (node.module or ""), package)


def _top_level_names(tree: ast.Module) -> list[str]:
    """Names a module binds at top level: what `from package import module` makes reachable as module.NAME."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [target.id for target in targets if isinstance(target, ast.Name)]
    return list(dict.fromkeys(names))


HarnessNames = dict[str, set[str]]  # harness module -> the names imported from it


def _kept_lines(module: ModuleType, local: Callable[[str], bool], inlined: list[str], seen: set[str],
                wanted: HarnessNames) -> str:
    """The module's source with harness and local imports removed (local ones inlined into `inlined` first)."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError) as exc:
        raise ReproSourceError(f"{module.__name__}: its source cannot be read ({exc})") from None
    lines = source.splitlines()
    drop: set[int] = set()
    bindings: list[str] = []
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        where = f"{module.__name__}:{node.lineno}"
        statement = set(range(node.lineno - 1, node.end_lineno or node.lineno))
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "harness" or local(alias.name):
                    raise ReproSourceError(f"{where}: `import {alias.name}` of a module a reproducer cannot import;"
                                           " use `from ... import name`")
            continue
        name = _resolve(node, module)
        if name == "__future__":
            drop |= statement
        elif name == "harness" or name.startswith("harness."):
            for alias in node.names:
                if alias.asname and alias.asname != alias.name:
                    raise ReproSourceError(f"{where}: imports {alias.name} as {alias.asname} from the harness;"
                                           " a reproducer copies harness names under their own names")
                wanted.setdefault(name, set()).add(alias.name)
            drop |= statement
        elif local(name):
            drop |= statement
            for alias in node.names:
                if alias.name == "*":
                    raise ReproSourceError(f"{where}: `import *` from a local module cannot be inlined")
                submodule = f"{name}.{alias.name}"
                if importlib.util.find_spec(submodule) if _is_package(name) else False:
                    names = _inline(importlib.import_module(submodule), local, inlined, seen, wanted)
                    fields = ", ".join(f"{n}={n}" for n in names)
                    bindings.append(f"{alias.asname or alias.name} = types.SimpleNamespace({fields})")
                else:
                    _inline(importlib.import_module(name), local, inlined, seen, wanted)
                    if alias.asname:
                        bindings.append(f"{alias.asname} = {alias.name}")
    kept = [line for number, line in enumerate(lines) if number not in drop]
    if bindings:
        kept = ["import types", *bindings, *kept]
    return "\n".join(kept).strip() + "\n"


def _is_package(name: str) -> bool:
    found = importlib.util.find_spec(name)
    return bool(found and found.submodule_search_locations)


def _inline(module: ModuleType, local: Callable[[str], bool], inlined: list[str], seen: set[str],
            wanted: HarnessNames) -> list[str]:
    """Append the module's standalone source to `inlined` (once); return the names it binds at top level."""
    names = _top_level_names(ast.parse(inspect.getsource(module)))
    if module.__name__ not in seen:
        seen.add(module.__name__)
        body = _kept_lines(module, local, inlined, seen, wanted)
        inlined.append(f"# ---- from {module.__name__} ----\n{body}")
    return names


def standalone_module_source(module: ModuleType) -> tuple[str, HarnessNames]:
    """The module and the local modules it imports, in dependency order, without harness imports; and the
    harness names those imports asked for, by module (the reproducer defines them).

    Local: the module's own top-level package, and the harness's catalogue (`kernels`), which a
    reproducer cannot import either. `from package import module` inlines the module and binds its
    top-level names to a namespace of that name (module-level code runs at the top of the script, so
    Triton finds every `@triton.jit` function's source in the script file)."""
    home_package = module.__name__.split(".")[0]

    def local(name: str) -> bool:
        return any(name == package or name.startswith(package + ".") for package in (home_package, CATALOGUE))

    inlined: list[str] = []
    wanted: HarnessNames = {}
    _inline(module, local, inlined, set(), wanted)
    return "\n\n".join(inlined), wanted
