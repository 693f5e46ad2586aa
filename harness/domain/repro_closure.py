"""The harness's own code, as one standalone block: the functions a cell runs and everything they use.

A reproducer must run the cell exactly as the harness runs it, yet run where the harness is not
installed. So its code is not written twice: starting from the functions a cell calls (a style's
builder, a pipeline's runner), this collects, from the harness's source files, the source of every
harness function, class and constant they reach, dependencies first, and the imports of everything
else (torch, typing, the standard library). Imports of harness names, at the top of a module or
inside a function, are dropped: the names they bind are defined in the block. Two harness objects of
one name (two loaders' `main`) get the second one's module in its name, and every reference follows.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import io
import tokenize
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

HARNESS = "harness"
Key = tuple[str, str]  # (module name, top-level name in that module)


class ReproClosureError(Exception):
    """Harness code that cannot be made standalone; the message names the module and the name."""


def _is_harness(module_name: str | None) -> bool:
    return bool(module_name) and (module_name == HARNESS or str(module_name).startswith(HARNESS + "."))


@dataclass
class _ModuleIndex:
    """What a module binds at top level: its definitions, its harness imports, its other imports."""

    module: ModuleType
    lines: list[str]
    definitions: dict[str, ast.stmt] = field(default_factory=dict)
    harness_imports: dict[str, Key] = field(default_factory=dict)  # local name -> (module, name) it comes from
    other_imports: dict[str, str] = field(default_factory=dict)  # local name -> the import statement binding it


def _import_line(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
    bound = f" as {alias.asname}" if alias.asname else ""
    if isinstance(node, ast.Import):
        return f"import {alias.name}{bound}"
    return f"from {'.' * node.level}{node.module or ''} import {alias.name}{bound}"


def _resolve_from(node: ast.ImportFrom, module: ModuleType) -> str:
    if not node.level:
        return node.module or ""
    package = module.__package__ or module.__name__.rpartition(".")[0]
    return importlib.util.resolve_name("." * node.level + (node.module or ""), package)


def _harness_imports_of(node: ast.ImportFrom, module: ModuleType) -> dict[str, Key]:
    source = _resolve_from(node, module)
    return {alias.asname or alias.name: (source, alias.name) for alias in node.names}


def _index(module: ModuleType) -> _ModuleIndex:
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError) as exc:
        raise ReproClosureError(f"{module.__name__}: its source cannot be read ({exc})") from None
    index = _ModuleIndex(module, source.splitlines())
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            index.definitions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    index.definitions[target.id] = node
        elif isinstance(node, ast.ImportFrom) and _is_harness(_resolve_from(node, module)):
            index.harness_imports.update(_harness_imports_of(node, module))
        elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if isinstance(node, ast.Import) and _is_harness(alias.name):
                    raise ReproClosureError(f"{module.__name__}:{node.lineno}: `import {alias.name}`; use from-imports")
                bound = alias.asname or alias.name.split(".")[0]
                index.other_imports[bound] = _import_line(node, alias)
    return index


@functools.cache
def _index_of_module(module_name: str) -> _ModuleIndex:
    """A module's index, read once per process: the harness's source does not change under a running harness."""
    return _index(importlib.import_module(module_name))


@dataclass
class _Item:
    key: Key
    text: str  # the definition's source, function-level harness imports removed
    references: dict[str, Key]  # name used in the text -> the harness object it means


def _start_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


class SourceClosure:
    """Collects harness objects and what they reach; `text()` is the block, imports first.

    `overrides` replaces a harness object by another one under the first one's name: what a
    standalone script must do differently (the fresh process that imports the script instead of
    the harness's registry) is then harness code too."""

    def __init__(self, overrides: dict[Key, Key] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._items: dict[Key, _Item] = {}
        self._order: list[Key] = []
        self._visiting: set[Key] = set()
        self._imports: list[str] = []
        self._names: dict[Key, str] = {}

    def _index_of(self, module_name: str) -> _ModuleIndex:
        return _index_of_module(module_name)

    def add(self, obj: Any) -> str:
        """Add a harness function or class (and what it reaches); return its name in the block."""
        module_name, name = getattr(obj, "__module__", None), getattr(obj, "__name__", None)
        if not _is_harness(module_name) or not name:
            raise ReproClosureError(f"{obj!r} is not a harness function or class")
        key = self._follow((str(module_name), name))
        return self.name_of(key) if key else name

    def add_names(self, module_name: str, names: set[str]) -> None:
        """Add the harness names a plug-in's module imports from `module_name` (the block defines them)."""
        for name in sorted(names):
            self._follow((module_name, name))

    def name_of(self, key: Key) -> str:
        return self._names[key]

    def names(self) -> set[str]:
        """Every name the block defines."""
        return set(self._names.values())

    def _follow(self, key: Key) -> Key | None:
        """The definition `key` means, added with its dependencies; None when it is a non-harness import."""
        module_name, name = key
        index = self._index_of(module_name)
        if name in index.definitions:
            target = self.overrides.get(key, key)
            if target not in self._items and target not in self._visiting:
                self._add_definition(target, shown_as=name)
            return target
        if name in index.harness_imports:
            return self._follow(index.harness_imports[name])
        if name in index.other_imports:
            self._need_import(index.other_imports[name])
            return None
        found = getattr(index.module, name, None)  # a name the module makes on demand: `from harness import KernelSpec`
        defined_in, defined_as = getattr(found, "__module__", None), getattr(found, "__name__", None)
        if _is_harness(defined_in) and defined_as and (defined_in, defined_as) != key:
            return self._follow((str(defined_in), defined_as))
        raise ReproClosureError(f"{module_name}: no top-level {name!r} to copy into a reproducer")

    def _need_import(self, line: str) -> None:
        if line not in self._imports:
            self._imports.append(line)

    def _add_definition(self, key: Key, shown_as: str) -> None:
        module_name, name = key
        index = self._index_of(module_name)
        if isinstance(getattr(index.module, name, None), ModuleType):
            raise ReproClosureError(f"{module_name}.{name} is a module; import names from it instead")
        node = index.definitions[name]
        self._visiting.add(key)
        self._claim(key, shown_as)
        first, last = _start_line(node), node.end_lineno or node.lineno
        block = index.lines[first - 1:last]
        references: dict[str, Key] = {}
        dropped: dict[int, bool] = {}  # line in the block -> whether it starts a dropped import
        local_harness: dict[str, Key] = {}
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and _is_harness(_resolve_from(inner, index.module)):
                local_harness.update(_harness_imports_of(inner, index.module))
                for line in range(inner.lineno, (inner.end_lineno or inner.lineno) + 1):
                    dropped[line - first] = line == inner.lineno
        for inner in ast.walk(node):  # docstrings: the harness's source has them; a script to paste is shorter without
            docstring = _docstring_of(inner)
            if docstring is not None and docstring.lineno > getattr(inner, "lineno", 0):
                only_statement = len(getattr(inner, "body", [])) == 1
                for line in range(docstring.lineno, (docstring.end_lineno or docstring.lineno) + 1):
                    dropped[line - first] = only_statement and line == docstring.lineno
        used = {inner.id for inner in ast.walk(node) if isinstance(inner, ast.Name)}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            used.add(node.name)
        for used_name in sorted(used):
            if used_name == name:
                references[used_name] = key
                continue
            if used_name in local_harness:
                target = self._follow(local_harness[used_name])
            elif used_name in index.definitions or used_name in index.harness_imports or used_name in index.other_imports:
                target = self._follow((module_name, used_name))
            else:
                continue  # a builtin or a local name
            if target is not None:
                references[used_name] = target
        text = "\n".join(line if number not in dropped else _blank(line)
                         for number, line in enumerate(block) if number not in dropped or dropped[number])
        self._visiting.discard(key)
        self._items[key] = _Item(key, text, references)
        self._order.append(key)

    def _claim(self, key: Key, name: str) -> None:
        taken = set(self._names.values())
        chosen = name if name not in taken else f"{name}_{key[0].rsplit('.', 1)[-1]}"
        if chosen in taken:
            raise ReproClosureError(f"{key[0]}.{key[1]}: the name {chosen!r} is taken twice in a reproducer")
        self._names[key] = chosen

    def imports(self) -> list[str]:
        return list(self._imports)

    def text(self) -> str:
        """The definitions in dependency order, each under its name in the block."""
        parts = []
        for key in self._order:
            item = self._items[key]
            renames = {used: self._names[target] for used, target in item.references.items()
                       if self._names[target] != used}
            parts.append(_renamed(item.text, renames) if renames else item.text)
        return "\n\n\n".join(parts) + "\n"


def _docstring_of(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", None)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not body:
        return None
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first
    return None


def _blank(line: str) -> str:
    """A dropped line that was a block's only statement: `pass` at its indentation keeps the block non-empty."""
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}pass"


def _renamed(text: str, renames: dict[str, str]) -> str:
    """`text` with every name in `renames` replaced, except after a dot (an attribute) or as a keyword in a call."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    edits: list[tuple[int, int, int, str]] = []  # (row, start column, end column, new name)
    previous = None
    for position, token in enumerate(tokens):
        if token.type == tokenize.NAME and token.string in renames and not (previous and previous.string == "."):
            following = next((t for t in tokens[position + 1:] if t.type not in (tokenize.NL, tokenize.COMMENT)), None)
            if not (following and following.string == "=" and _inside_call(tokens, position)):
                edits.append((token.start[0], token.start[1], token.end[1], renames[token.string]))
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = token
    lines = text.split("\n")
    for row, start, end, new in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    return "\n".join(lines)


def _inside_call(tokens: list[tokenize.TokenInfo], position: int) -> bool:
    depth = 0
    for token in reversed(tokens[:position]):
        if token.string in (")", "]", "}"):
            depth += 1
        elif token.string in ("(", "[", "{"):
            if depth == 0:
                return token.string == "("
            depth -= 1
    return False
