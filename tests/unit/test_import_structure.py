"""The harness's imports hold the layout of docs/architecture.md: no circle, and no import hidden in a function
without a reason.

An import inside a function hides a circle from import-linter and from the reader, so each one between harness
modules carries its reason on its line: `from harness.x import y  # deferred: <why>`. The reasons that hold:
the module imports torch or triton (the tier must be entered first, and the report and the CLI's `--help` must
not pay for it), or it runs in another process (a zygote, a child Python) that must not have imported it yet.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "harness"
DEFERRED = "# deferred:"
KNOWN_UNREASONED: set[str] = set()  # none is left; an entry added here needs a reason in review
KNOWN_CIRCLES: set[frozenset[str]] = set()
MOST_DEFERRED = 29  # few: lower it when one goes; raising it needs a reason in review (29: the pytest plugin loads
# the kernels, and with them torch, only once a matrix suite is collected: three imports; `findings` writes its
# reproducers with the domain, which imports torch: two, one per module it needs)


def module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(HARNESS.rglob("*.py"))}


def imported_modules(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The harness modules an import statement loads (a `from package import module` names the module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in MODULES]
    base = node.module or ""
    if node.level:
        base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
    found = []
    for alias in node.names:
        if f"{base}.{alias.name}" in MODULES:
            found.append(f"{base}.{alias.name}")
        elif base in MODULES:
            found.append(base)
    return found


def harness_imports(path: Path) -> list[tuple[ast.Import | ast.ImportFrom, str | None, list[str]]]:
    """Each import of a harness module in `path`: the node, the function it sits in (None: module level), the modules."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, function or child.name)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                modules = imported_modules(child, package)
                if modules:
                    found.append((child, function, modules))
            else:
                visit(child, function)

    visit(tree, None)
    return found


def deferred_imports() -> list[tuple[str, int, str, str]]:
    """(file, line, function, the line's text) of each harness import inside a function."""
    rows = []
    for path in MODULES.values():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node, function, _ in harness_imports(path):
            if function is not None:
                text = " ".join(lines[node.lineno - 1: node.end_lineno])
                rows.append((str(path.relative_to(HARNESS.parent)), node.lineno, function, text))
    return rows


def is_known(file: str, function: str) -> bool:
    return file in KNOWN_UNREASONED or f"{file}:{function}" in KNOWN_UNREASONED


def test_every_deferred_import_states_its_reason():
    missing = [f"{file}:{line} in {function}(): {text.strip()}" for file, line, function, text in deferred_imports()
               if DEFERRED not in text and not is_known(file, function)]
    assert not missing, ("an import of a harness module inside a function needs `# deferred: <reason>` on its line "
                         "(or belongs at the top of the module):\n" + "\n".join(missing))


def test_reasons_are_sentences_not_placeholders():
    empty = [f"{file}:{line}" for file, line, _, text in deferred_imports()
             if DEFERRED in text and len(text.split(DEFERRED, 1)[1].strip()) < 10]
    assert not empty, f"a `# deferred:` reason says too little: {empty}"


def test_deferred_imports_are_few():
    counted = [row for row in deferred_imports() if not is_known(row[0], row[2])]
    assert len(counted) <= MOST_DEFERRED, (
        f"{len(counted)} deferred imports between harness modules (at most {MOST_DEFERRED}): move them to the top of "
        "their modules, or break what makes them necessary")


def import_graph() -> dict[str, set[str]]:
    """Every harness module -> the harness modules it imports, deferred imports included (a circle through one is
    still a circle)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for _, _, modules in harness_imports(path):
            graph[name].update(module for module in modules if module != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan), each one circle or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_import_circles():
    # A package's __init__ that imports its own modules is not a circle of the layout: leave packages out.
    graph = {name: {t for t in targets if not MODULES[t].name == "__init__.py"}
             for name, targets in import_graph().items() if MODULES[name].name != "__init__.py"}
    found = [sorted(component) for component in circles(graph) if frozenset(component) not in KNOWN_CIRCLES]
    assert not found, f"import circles between harness modules: {found}"


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [{"a", "b"}]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [{"a", "b", "c"}]),
])
def test_circle_finder_finds_circles(graph, expected):
    assert circles(graph) == expected


def test_the_guard_sees_a_deferred_import(tmp_path):
    """The finder itself: an import inside a function is seen as deferred, one at the top is not."""
    path = HARNESS / "run" / "caches.py"  # a real module, parsed as the test parses all of them
    assert all(function is None for _, function, _ in harness_imports(path))
    assert any(function == "execute_cell" for _, function, _ in harness_imports(HARNESS / "run" / "cell.py"))


MOST_RUN_MODULES = 22  # harness/run/*.py, __init__.py included: a mechanism of several modules gets a package of its own


def test_the_run_keeps_few_top_level_modules():
    flat = sorted(path.name for path in (HARNESS / "run").glob("*.py"))
    assert len(flat) <= MOST_RUN_MODULES, (
        f"harness/run/ has {len(flat)} top-level modules (at most {MOST_RUN_MODULES}): group those of one mechanism "
        f"in a package with one face, as harness/run/startup/ and harness/run/isolation/ are: {flat}")


@pytest.mark.parametrize("package", ["harness.run.startup", "harness.run.isolation"])
def test_a_run_package_is_entered_through_its_face(package):
    """The rest of the harness imports a run package's __init__ (its face), never a module in it (import-linter's
    `protected` contracts say the same; this says it without running lint-imports). The isolation's `worker_mode` is
    part of its face: the xdist hooks drive a worker through it."""
    face = {f"{package}.worker_mode"} if package == "harness.run.isolation" else set()
    reaching_in = sorted(f"{name} -> {target}" for name, targets in import_graph().items()
                         if not (name == package or name.startswith(package + "."))
                         for target in targets if target.startswith(package + ".") and target not in face)
    assert not reaching_in, f"imports of {package}'s own modules from outside it: {reaching_in}"
