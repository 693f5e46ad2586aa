"""One cell as a standalone Python script, made of the code the harness itself runs for that cell.

Nothing in the script is a retyped copy: its harness part is the source of the functions a cell
calls (the style's builder in harness.domain.styles, the pipeline's runner in
harness.domain.pipelines, the checking and tolerance model, harness.domain.repro_main's entry
point) and of everything they reach, collected by harness.domain.repro_closure; its kernel part is
the spec's module made standalone (harness.domain.repro_source). So a change to a style or a
pipeline changes every reproducer, and ruff and mypy check the only copy there is.

The script needs torch and triton (and the user's own library, if the spec imports it), never the
harness. It uses the cell's seed and sizes; eager_inputs checks the recorded failing example
(or, with none recorded, the explicit cases every search starts with) instead of searching again.
"""

from __future__ import annotations

import importlib
import platform
import sys
from pathlib import Path
from typing import Any

import torch

from harness.domain import repro_main
from harness.domain.inputs import InputCase, explicit_cases
from harness.domain.pipelines import RUNNERS
from harness.domain.pipelines.eager import run_eager_inputs_on
from harness.domain.repro_closure import ReproClosureError, SourceClosure
from harness.domain.repro_source import ReproSourceError, standalone_module_source
from harness.domain.spec import KernelSpec
from harness.domain.styles import BUILDERS
from harness.vocab import split_style

# The child modules a pipeline runs in a fresh Python, by the name the pipeline gives them.
FRESH_MAINS: dict[str, tuple[str, ...]] = {
    "aoti_fresh_process": ("harness.domain.pipelines.aoti_loader",),
    "export_roundtrip": ("harness.domain.pipelines.export_loader",),
    "export_roundtrip_bare": ("harness.domain.pipelines.export_loader",),
}
# What a script does differently from the harness, as harness code: the consumer imports the script, not the registry.
OVERRIDES = {("harness.domain.pipelines.export_loader", "import_kernel_op"):
             ("harness.domain.repro_main", "import_kernel_op_from_script")}
GLUE_NAMES = ("SPEC", "BUILDER", "RUNNER", "CASES")


class ReproUnsupported(Exception):
    """A cell this generator cannot write; the message says which part."""


# Every way writing a script can fail for the input it was given: what a command turns into its one-line error.
REPRO_ERRORS: tuple[type[Exception], ...] = (ReproUnsupported, ReproClosureError, ReproSourceError)


def _module_of(spec: KernelSpec) -> Any:
    """The module that defines the spec (its `source`: a module name, or a path the registry imported)."""
    if spec.source and Path(spec.source).is_file():
        wanted = Path(spec.source).resolve()
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if file and Path(file).resolve() == wanted:
                return module
    if spec.source in sys.modules:
        return sys.modules[spec.source]
    return sys.modules.get(spec.launch.__module__)


def _header(spec: KernelSpec, cell: str, tier: str, expected: dict[str, Any] | None, name_machine: bool) -> str:
    import triton

    where = torch.cuda.get_device_name() if tier == "gpu" and torch.cuda.is_available() else \
        "CPU, Triton interpreter (TRITON_INTERPRET=1)" if tier == "cpu" else "GPU tier (no GPU where it was written)"
    if expected is None:
        should = "not given (pass --results FILE to copy the recorded outcome here)"
    elif expected["outcome"] == "pass":
        should = "pass: the script exits 0 and prints PASS"
    elif expected["outcome"] == "skip":
        should = f"skip: {expected.get('reason')}"
    else:
        should = (f"{expected['outcome']} at stage {expected.get('stage')}: "
                  f"{expected.get('error_type')}: {expected.get('error')}")
    generated = [f"Generated with: python {platform.python_version()}, torch {torch.__version__},"
                 f" triton {triton.__version__}, {where}"] if name_machine else []
    lines = [
        f"Reproducer for the triton-compat-matrix cell {cell}",
        f"  kernel {spec.name}: {spec.description or 'no description'}",
        *generated,
        f"Recorded outcome: {should}",
        "Run: python repro.py   (needs torch and triton, not the harness; exit 0: pass or skip, 1: wrong or fail)",
        "The harness's code below is copied from its source files by `python -m harness repro`; edit the kernel part.",
    ]
    return "\n".join("# " + line for line in lines) + "\n"


def _cases(spec: KernelSpec, expected: dict[str, Any] | None) -> list[InputCase]:
    """The recorded failing example of an eager_inputs cell, else the explicit cases of every dtype."""
    example = (expected or {}).get("detail", {}).get("example") if expected else None
    if example:
        dtype = getattr(torch, example["dtype"])
        return [InputCase(int(example["size"]), dtype, bool(example["contiguous"]))]
    return [case for dtype in spec.dtypes for case in explicit_cases(spec, dtype)]


def _case_source(case: InputCase) -> str:
    return f"InputCase(size={case.size}, dtype=torch.{str(case.dtype).removeprefix('torch.')}, contiguous={case.contiguous})"


def write_repro(spec: KernelSpec, style: str, pipeline: str, tier: str, seed: int = 0,
                expected: dict[str, Any] | None = None, name_machine: bool = True) -> str:
    """The reproducer's text for one cell (a call-site style is `style@site`). `name_machine=False` leaves the
    writing machine's versions out of the header, so the text depends on the checkout alone (committed reports)."""
    base, site = split_style(style)
    if base not in BUILDERS or pipeline not in RUNNERS:
        raise ReproUnsupported(f"unknown {'style' if base not in BUILDERS else 'pipeline'} in {style}/{pipeline}")
    module = _module_of(spec)
    if module is None:
        raise ReproUnsupported(f"kernel {spec.name}: cannot find the module that defines its launch")
    kernel_source, harness_names = standalone_module_source(module)
    closure = SourceClosure(overrides=OVERRIDES)
    closure.add(KernelSpec)
    for module_name, names in harness_names.items():
        closure.add_names(module_name, names)
    entry = closure.add(repro_main.run_repro)
    builder = closure.add(BUILDERS[base])
    if pipeline == "eager_inputs":
        runner = f"functools.partial({closure.add(run_eager_inputs_on)}, cases=CASES)"
        case_class = closure.add(InputCase)
        cases = "CASES = [\n" + "".join(f"    {_case_source(c)},\n" for c in _cases(spec, expected)) + "]\n"
        cases = cases.replace("InputCase(", f"{case_class}(")
    else:
        runner, cases = closure.add(RUNNERS[pipeline]), ""
    mains = {name: closure.add(importlib.import_module(name).main) for name in FRESH_MAINS.get(pipeline, ())}
    clashes = set(GLUE_NAMES) & closure.names()
    if clashes:
        raise ReproUnsupported(f"the harness defines {', '.join(sorted(clashes))}, a name the script's glue uses")
    cell = f"{spec.name}/{style}/{pipeline}"
    interpret = ('os.environ["TRITON_INTERPRET"] = "1"  # CPU tier: Triton\'s interpreter on CPU tensors;'
                 " set before triton is imported\n" if tier == "cpu" else "")
    imports = sorted(set(closure.imports()) | {"import functools", "import os", "import sys", "import torch"},
                     key=lambda line: (line.startswith("from "), line))  # plain imports first, as isort has them
    dispatch = ""
    if mains:
        table = ", ".join(f"{name!r}: {function}" for name, function in mains.items())
        dispatch = (f"# A fresh Python for the pipeline's child side: it stops here, before the kernel is defined.\n"
                    f"if __name__ == \"__main__\" and sys.argv[1:2] == [{repro_main.FRESH_PROCESS_FLAG!r}]:\n"
                    f"    sys.exit({{{table}}}[sys.argv[2]](sys.argv[3:]))\n")
    parts = [
        "#!/usr/bin/env python3\n" + _header(spec, cell, tier, expected, name_machine),
        "from __future__ import annotations\n",
        "import os\n\n" + interpret,
        "\n".join(line for line in imports if line != "import os") + "\n",
        "# ---- the harness's code this cell runs (copied from the harness's source) ----\n" + closure.text(),
        dispatch,
        f"# ---- the kernel: {module.__name__} ----\n" + kernel_source,
        f"# ---- the cell: {cell} ----\n"
        f"SPEC = next(v for v in list(globals().values()) if isinstance(v, KernelSpec) and v.name == {spec.name!r})\n"
        "object.__setattr__(SPEC, \"source\", os.path.abspath(__file__))  # a fresh consumer process imports this file\n"
        f"BUILDER = {builder}\n" + cases + f"RUNNER = {runner}\n",
        "if __name__ == \"__main__\":\n"
        f"    sys.exit({entry}(SPEC, {style!r}, {pipeline!r}, {tier!r}, BUILDER, RUNNER, seed={seed},"
        " script=os.path.abspath(__file__)))\n",
    ]
    return "\n\n".join(part.strip("\n") + "\n" for part in parts if part.strip())
