"""Finds KernelSpecs: the built-in catalogue, `--kernels-from` modules or paths, and installed entry points."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import traceback
from importlib import metadata
from pathlib import Path
from types import ModuleType

from harness.domain.operator_overrides import overrides, registrations
from harness.domain.spec import InvalidSpecError, KernelSpec

ENTRY_POINT_GROUP = "triton_compat_matrix.kernels"


class KernelSourceError(Exception):
    """A kernel source that cannot give specs; the message is one line naming it and what is missing."""


def _import_source(source: str) -> ModuleType:
    path = Path(source)
    if source.endswith(".py") or path.exists():
        if path.is_dir():
            raise KernelSourceError(f"{source}: is a folder, not a kernel .py file")
        if not path.is_file():
            raise KernelSourceError(f"{source}: no such kernel file")
        module_name = f"_tcm_user_kernels_{abs(hash(str(path.resolve())))}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise KernelSourceError(f"{source}: cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except InvalidSpecError as exc:
            del sys.modules[module_name]
            raise KernelSourceError(f"{source}: invalid {exc}{_line_in(exc, path)}") from exc
        except (Exception, SystemExit) as exc:  # a module calling sys.exit() on import is still one bad source
            del sys.modules[module_name]
            raise KernelSourceError(f"{source}: raised on import: {type(exc).__name__}: {_first_line(exc)}") from exc
        return module
    try:
        return importlib.import_module(source)
    except InvalidSpecError as exc:
        raise KernelSourceError(f"{source}: invalid {exc}") from exc
    except ModuleNotFoundError as exc:
        if exc.name and source.startswith(exc.name):
            raise KernelSourceError(f"{source}: no such module or file") from exc
        raise KernelSourceError(f"{source}: raised on import: {type(exc).__name__}: {_first_line(exc)}") from exc
    except (Exception, SystemExit) as exc:
        raise KernelSourceError(f"{source}: raised on import: {type(exc).__name__}: {_first_line(exc)}") from exc


def _line_in(exc: BaseException, path: Path) -> str:
    """` (line 12)`: where in the user's file the bad spec was made."""
    wanted = path.resolve()
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if Path(frame.filename).resolve() == wanted]
    return f" (line {lines[-1]})" if lines else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


# Plug-in sources that replaced kernels of existing operators when imported: refused on every load, not only the first.
_OVERRIDING_SOURCES: dict[str, list[str]] = {}


def _import_plugin(source: str) -> ModuleType:
    """A plug-in's module, refused when importing it registered kernels over existing operators (FlagGems'
    `flag_gems.enable()` replaces aten's CUDA kernels): from then on the `native` control, PyTorch itself, would
    run the plug-in's kernels, and every `env` verdict would be judged against them (harness.domain.operator_overrides)."""
    import torch

    before = registrations(torch.library)
    module = _import_source(source)
    # Meta kernels compute no values, and torch registers some for aten lazily when a module of its own is first
    # imported (a plug-in's import may be the first): only kernels that compute what the control returns count here.
    added = [entry for entry in overrides(before, registrations(torch.library)) if not entry.endswith("/Meta")]
    if added:
        _OVERRIDING_SOURCES[source] = added
    if source in _OVERRIDING_SOURCES:
        found = _OVERRIDING_SOURCES[source]
        raise KernelSourceError(
            f"{source}: registers kernels over existing operators at import ({', '.join(found[:3])}"
            f"{' ...' if len(found) > 3 else ''}): the native control would run them instead of PyTorch's own; launch "
            "the library's kernels from the spec (or register them inside the launch and remove them there)")
    return module


def specs_in_module(module: ModuleType, source: str) -> list[KernelSpec]:
    """Every KernelSpec a module defines: a `SPECS` sequence, a `SPEC`, or any module-level spec."""
    declared = getattr(module, "SPECS", ())
    if isinstance(declared, (str, bytes, KernelSpec)) or not hasattr(declared, "__iter__"):
        raise KernelSourceError(f"{source}: SPECS must be a list of KernelSpec, not {type(declared).__name__}")
    found = list(declared)
    found += [value for value in vars(module).values() if isinstance(value, KernelSpec)]
    unique: list[KernelSpec] = []
    for spec in found:
        if not isinstance(spec, KernelSpec):
            raise KernelSourceError(f"{source}: SPECS holds {type(spec).__name__}, not KernelSpec")
        if all(spec is not seen for seen in unique):
            unique.append(spec)
    if not unique:
        raise KernelSourceError(f"{source}: defines no KernelSpec (expected SPEC, SPECS or a module-level KernelSpec)")
    return unique


def specs_from_source(source: str) -> list[KernelSpec]:
    """The specs of one source, imported as `load_specs` imports it (a fresh process rebuilding one kernel's op)."""
    return specs_in_module(_import_source(source), source)


def load_specs(sources: list[str] | None = None, builtin: bool = True, entry_points: bool = True) -> dict[str, KernelSpec]:
    """Name -> spec over every source; two specs of one name is an error, not a silent override."""
    from kernels import BUILTIN_MODULES

    ordered_sources: list[str] = list(BUILTIN_MODULES) if builtin else []
    if entry_points:
        ordered_sources += [ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)]
    ordered_sources += list(sources or [])
    specs: dict[str, KernelSpec] = {}
    builtin_sources = set(BUILTIN_MODULES) if builtin else set()
    for source in ordered_sources:
        module = _import_source(source) if source in builtin_sources else _import_plugin(source)
        for spec in specs_in_module(module, source):
            if spec.name in specs and specs[spec.name] is not spec:
                raise KernelSourceError(f"{source}: kernel name {spec.name!r} is already defined by {specs[spec.name].source}")
            object.__setattr__(spec, "source", source)
            specs[spec.name] = spec
    return specs


def load_specs_once(sources: list[str] | None = None) -> dict[str, KernelSpec]:
    """`load_specs(sources)`, loaded once per process: what a worker's cells ask, hundreds of times over one list.

    Each load read every installed distribution's entry points again: 6.6 of the 144 CPU seconds of the CPU tier's
    default selection in one worker (docs/maintainers.md, "Isolation"). A kernel module is imported
    once per process anyway, so a second load would give the same spec objects; a load that raised is not kept, so
    a refused source is refused again on every ask."""
    return dict(_specs_of(tuple(sources or ())))  # a copy: a caller may change its dict


@functools.cache
def _specs_of(sources: tuple[str, ...]) -> dict[str, KernelSpec]:
    """Kept by `functools.cache`, not in a module-level dict: the worker's guard compares the harness's own module
    containers before and after each cell (harness.run.isolation.global_state), and this one fills by design."""
    return load_specs(list(sources))
