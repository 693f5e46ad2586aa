"""The content key of a cell (`--reuse`): a hash of what its outcome depends on, so an unchanged cell need not run.

Two parts. A cell's own key: its id (kernel, style, call site, pipeline), the spec's data fields, and the source
of every file of the kernel's code, found from the loaded objects: each callable the spec holds (kernels, launch,
reference, make_inputs, backward...) is followed through the names its code uses (its globals, attributes of the
modules it uses, defaults, closures, the methods of classes it uses, the items of containers it names) to the
functions, classes and modules it reaches; every file that defines one of them is hashed whole, with the
`__init__.py` of each package above it and the file the spec itself came from. Code of torch, triton, the harness
and the standard library is not followed (their versions and the harness's hash are in the run's part); another
installed package is followed when the spec's own code lives in it (a library installed in site-packages, such as
liger-kernel), and counted by its version otherwise. The run's part: the harness's source, torch, triton, Python,
CUDA, the GPU, its driver, the tier, the interpreter mode, and the options that change outcomes.

What it cannot see (docs/kernel-library-ci.md): data files a kernel reads, environment variables, code reached
without a name its code holds (getattr with a built string, a registry filled elsewhere), a file edited between
the run's start and a cell, and a package's `__init__.py`'s own imports that the kernel's code never names.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sys
import sysconfig
import types
from importlib import metadata
from pathlib import Path
from typing import Any

HARNESS_ROOT = Path(__file__).resolve().parents[2]  # harness/
MATRIX_ROOT = HARNESS_ROOT.parent / "matrix"
# The environment's fields the run's part holds (harness.run.environment.describe); the rest (host, cores, OS
# build) changes between CI runners without changing an outcome.
ENVIRONMENT_KEYS = ("python", "torch", "triton", "cuda", "gpu", "driver", "tier", "interpreter", "interpreter_autotune")
# Code never followed: its version stands for it.
_NOT_FOLLOWED_PACKAGES = ("torch", "triton", "harness")


def _digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@functools.cache
def harness_source_hash() -> str:
    """The harness's own source (harness/ and the matrix/ suites): a change to any file makes every key new."""
    digest = hashlib.sha256()
    for root in (HARNESS_ROOT, MATRIX_ROOT):
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def outcome_options(isolation: str, cold_cache: bool, share_artifacts: bool, timeout_s: float,
                    repeat: int) -> dict[str, Any]:
    """The run options that can change a cell's outcome (a shorter limit makes a timeout, a cold cache a slower
    cell, --repeat a flaky one): the run's part holds them, so a run with other options reuses nothing."""
    return {"isolation": isolation, "cold_cache": cold_cache, "share_artifacts": share_artifacts,
            "timeout_s": float(timeout_s), "repeat": repeat}


def run_inputs(environment: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The run's part of every key, as a record: written in the results header, compared whole by `--reuse`."""
    return {"harness_source": harness_source_hash(),
            "environment": {key: environment.get(key) for key in ENVIRONMENT_KEYS},
            "options": dict(sorted(options.items()))}


@functools.cache
def _standard_library() -> tuple[str, ...]:
    return tuple(sorted({str(Path(sysconfig.get_paths()[name]).resolve()) + "/" for name in ("stdlib", "platstdlib")}))


@functools.cache
def _not_followed_packages() -> tuple[str, ...]:
    """The folders of torch, triton and the harness: their versions (and the harness's hash) stand for them."""
    roots = []
    for name in _NOT_FOLLOWED_PACKAGES:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            roots.append(str(Path(module.__file__).resolve().parent) + "/")  # type: ignore[arg-type]
    return tuple(sorted(roots))


def _excluded(path: str) -> bool:
    """The standard library (a venv's site-packages sits inside its folder: not excluded by it), torch, triton, the
    harness."""
    if path.startswith(_not_followed_packages()):
        return True
    return path.startswith(_standard_library()) and not _in_site_packages(path)


def _in_site_packages(path: str) -> bool:
    return "site-packages" in Path(path).parts or "dist-packages" in Path(path).parts


@functools.cache
def _distribution_version(top_level: str) -> str:
    """`name==version` of the installed distribution that provides a top-level package, or the name alone."""
    names = metadata.packages_distributions().get(top_level, [])
    return ",".join(f"{name}=={metadata.version(name)}" for name in sorted(set(names))) or top_level


class _Walk:
    """The files one spec's code reaches, and the versions of the other packages it uses."""

    def __init__(self, own_packages: set[str], spec_module: str | None, others: frozenset[int]) -> None:
        self.own_packages = own_packages  # site-packages top-level names whose code is the library's own
        self.spec_module = spec_module
        self.others = others  # ids of what other specs hold, and of their modules: the spec module's imports of them
        self.files: set[str] = set()
        self.versions: set[str] = set()
        self._seen: set[int] = set()

    def module_counts(self, name: str | None) -> bool:
        """Whether a module's code is followed (and its file hashed); records another package's version."""
        module = sys.modules.get(name or "")
        file = getattr(module, "__file__", None)
        if module is None or not file:
            return False
        resolved = str(Path(file).resolve())
        if _excluded(resolved):
            return False
        top = (name or "").split(".")[0]
        if _in_site_packages(resolved) and top not in self.own_packages:
            self.versions.add(_distribution_version(top))
            return False
        if resolved not in self.files:
            self.files.add(resolved)
            self._add_parents(name or "")
            for value in _imported_at_top(module):  # type: ignore[arg-type]
                if name != self.spec_module or id(value) not in self.others:  # are left to the other specs' keys
                    self.follow(value)
        return True

    def _add_parents(self, name: str) -> None:
        """A package's `__init__.py` runs before its module: its source counts (not what it imports)."""
        parts = name.split(".")
        for end in range(1, len(parts)):
            parent = sys.modules.get(".".join(parts[:end]))
            if parent is not None and getattr(parent, "__file__", None):
                self.files.add(str(Path(parent.__file__).resolve()))  # type: ignore[arg-type]

    def follow(self, obj: Any) -> None:
        obj = _unwrapped(obj)  # triton's JITFunction, Autotuner, Heuristics: the Python function they hold
        if id(obj) in self._seen:
            return
        self._seen.add(id(obj))
        if isinstance(obj, functools.partial):
            self.follow(obj.func)
            for item in (*obj.args, *obj.keywords.values()):
                self.follow(item)
        elif isinstance(obj, types.MethodType):
            self.follow(obj.__func__)
        elif isinstance(obj, types.FunctionType):
            self._follow_function(obj)
        elif isinstance(obj, type):
            if self.module_counts(obj.__module__):
                for member in vars(obj).values():
                    self.follow(getattr(member, "__func__", member))
        elif isinstance(obj, types.ModuleType):
            self.module_counts(obj.__name__)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            for item in obj:
                self.follow(item)
        elif isinstance(obj, dict):
            for item in obj.values():
                self.follow(item)
        elif callable(obj):
            self.follow(type(obj))

    def _follow_function(self, function: types.FunctionType) -> None:
        if not self.module_counts(function.__module__):
            return
        wrapped = getattr(function, "__wrapped__", None)
        if wrapped is not None:
            self.follow(wrapped)
        for value in (*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()):
            self.follow(value)
        for cell in function.__closure__ or ():
            try:
                self.follow(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        names = _code_names(function.__code__)
        for name in names:
            if name in function.__globals__:
                value = function.__globals__[name]
                self.follow(value)
                if isinstance(value, types.ModuleType) and self.module_counts(value.__name__):  # `ops.helper(...)`
                    for attribute in names:
                        if attribute in vars(value):
                            self.follow(vars(value)[attribute])


def _code_names(code: types.CodeType) -> set[str]:
    """Every global and attribute name a function's code, and the code nested in it, uses."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _code_names(constant)
    return names


def _is_code(value: Any) -> bool:
    """A function, a triton kernel (JITFunction, Autotuner: `.fn`), a callable object; not a type such as torch.Tensor."""
    return (callable(value) and not isinstance(value, type)) or _unwrapped(value) is not value


def _callables(spec: Any) -> list[Any]:
    return [value for field in dataclasses.fields(spec) if field.name != "source"
            for value in _flatten(getattr(spec, field.name)) if _is_code(value)]


def _flatten(value: Any) -> list[Any]:
    return [item for element in value for item in _flatten(element)] if isinstance(value, (tuple, list)) else [value]


def spec_data(spec: Any) -> dict[str, str]:
    """The spec's fields that are data (its callables count by their code): repr is stable for these."""
    data = {}
    for field in dataclasses.fields(spec):
        value = getattr(spec, field.name)
        if field.name == "source" or any(_is_code(item) for item in _flatten(value)):
            continue
        data[field.name] = repr(value)
    return data


def _own_packages(spec: Any, spec_module: str | None) -> set[str]:
    """The top-level packages of the spec's module and of its callables: the library, wherever it is installed."""
    names = {spec_module or ""}
    for value in _callables(spec):
        names.add(getattr(_unwrapped(value), "__module__", "") or "")
    return {name.split(".")[0] for name in names if name and name.split(".")[0] not in _NOT_FOLLOWED_PACKAGES}


def _spec_module(spec: Any) -> str | None:
    """The loaded module the spec came from (the registry's `source`: a module name, or a file loaded as one)."""
    if spec.source in sys.modules:
        return str(spec.source)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and spec.source and Path(file).resolve() == Path(spec.source).resolve():
            return name
    return None


def kernel_inputs(spec: Any, others: frozenset[int] = frozenset()) -> dict[str, Any]:
    """What a kernel's cells depend on in its own code: each file reached (path and hash), the other packages'
    versions, the spec's data. `others`: ids of the callables other specs hold, not followed from the spec's module."""
    module = _spec_module(spec)
    walk = _Walk(_own_packages(spec, module), module, others)
    walk.module_counts(module)
    for value in _callables(spec):
        walk.follow(value)
    return {"files": {path: _digest(Path(path).read_bytes()) for path in sorted(walk.files)},
            "packages": sorted(walk.versions), "spec": spec_data(spec)}


def _imported_at_top(module: types.ModuleType) -> list[Any]:
    """What a module's top-level code names and the module did not define itself: the modules and helpers it
    imports (a version check, shared settings, a module imported for what importing it does). Its own functions
    count by its source, and by whichever spec's code uses them."""
    file = getattr(module, "__file__", None)
    if not file or not file.endswith(".py"):
        return []
    try:
        names = compile(Path(file).read_bytes(), file, "exec").co_names
    except (OSError, SyntaxError, ValueError):
        return []
    values = [vars(module)[name] for name in names if name in vars(module)]
    values += [sys.modules[name] for name in names if "." in name and name in sys.modules]  # `import a.b`
    return [value for value in values if isinstance(value, types.ModuleType)
            or getattr(_unwrapped(value), "__module__", module.__name__) != module.__name__]


def _unwrapped(value: Any) -> Any:
    """The Python function a triton kernel object holds (`.fn`, repeatedly); anything else as it is."""
    for _ in range(8):
        try:
            inner = None if isinstance(value, type) else getattr(value, "fn", None)
        except Exception:  # an object whose __getattr__ raises something else (torch's custom-class proxies)
            inner = None
        if inner is None:
            return value
        value = inner
    return value


def kernel_key(spec: Any, others: frozenset[int] = frozenset()) -> str:
    return _digest(json.dumps(kernel_inputs(spec, others), sort_keys=True))


def cell_key(kernel: str, cell: str, run: dict[str, Any]) -> str:
    """One cell's key: its kernel's key, its id, and the run's part."""
    return _digest(json.dumps({"kernel": kernel, "cell": cell, "run": run}, sort_keys=True))


def _held(spec: Any) -> set[int]:
    """The ids of a spec's callables, of the functions they wrap and of the modules that define them."""
    values = [_unwrapped(value) for value in _callables(spec)] + _callables(spec)
    modules = [sys.modules.get(getattr(value, "__module__", "") or "") for value in values]
    return {id(value) for value in values + [module for module in modules if module is not None]}


def kernel_keys(specs: dict[str, Any], names: set[str]) -> dict[str, str]:
    """Each named kernel's key; what the other specs of `specs` hold is not followed from a spec module's imports
    (one module defining nine specs would make each depend on the nine kernels)."""
    held = {name: _held(spec) for name, spec in specs.items()}
    keys = {}
    for name in sorted(names):
        others = frozenset().union(*(ids for other, ids in held.items() if other != name)) - held[name]
        try:
            keys[name] = kernel_key(specs[name], frozenset(others))
        except Exception as exc:  # an object the walk cannot read: that kernel's cells get no key, and always run
            print(f"reuse: no content key for kernel {name} ({type(exc).__name__}: {exc}); its cells always run")
    return keys


def cell_keys(specs: dict[str, Any], cells: list[Any], run: dict[str, Any]) -> dict[str, str]:
    """cell id -> key, for `cells` (harness.run.selection.Cell) of the kernels in `specs`."""
    kernels = kernel_keys(specs, {cell.kernel for cell in cells})
    return {cell.id: cell_key(kernels[cell.kernel], cell.id, run) for cell in cells if cell.kernel in kernels}
