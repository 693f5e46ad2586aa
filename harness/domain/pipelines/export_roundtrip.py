"""The exported program as users ship it: export, torch.export.save, then load and run in a fresh process.

`export_roundtrip`: the fresh process first imports the kernel's module and builds the style's op, as a consumer
importing the library would, then loads the file. `export_roundtrip_bare`: it imports nothing of the kernel's
(only torch), which says whether the file alone is enough, and names the operators a consumer must import.

Export is strict first and non-strict where strict fails (the question is "can this be shipped as a file";
`detail.export` says which one made it). The sub-stages map onto the harness's stages; each failure's error line
starts with the sub-stage, and `detail.roundtrip_stage` names it:
  export -> trace, save -> compile (making the artifact, as AOTInductor's packaging is), import -> load (the
  fresh process imports the kernel's module), load -> load, run -> run, check -> check.
The child side is harness.domain.pipelines.export_loader, run through the run's fresh Python (CellContext.fresh_python).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from harness.domain.evidence import error_type, first_line
from harness.domain.fresh_run import FreshRun, fresh_timeline
from harness.domain.pipelines.aoti import FRESH_PROCESS_TIMEOUT_S, FreshProcessFailed
from harness.domain.pipelines.common import CellContext, StageFailure, built_artifact, check_result, expected_result, staged
from harness.domain.pipelines.export import export_program
from harness.domain.pipelines.export_loader import read_report
from harness.domain.poison import tensor_bytes
from harness.domain.styles import SkipCell

LOADER_MODULE = "harness.domain.pipelines.export_loader"
STAGE_OF: dict[str, str] = {"export": "trace", "save": "compile", "import": "load", "load": "load", "run": "run",
                            "check": "check"}
TORCH_NAMESPACES = ("aten", "prims")  # always registered: not what a consumer must import


@contextlib.contextmanager
def roundtrip_stage(name: str, context: CellContext | None) -> Iterator[None]:
    """`staged` under the harness's stage for `name`, with the sub-stage in the error line and the detail."""
    try:
        with staged(STAGE_OF[name], context):
            yield
    except StageFailure as failure:
        if "roundtrip_stage" not in failure.detail:
            failure.detail["roundtrip_stage"] = name
            failure.prefix = f"{name}: {failure.prefix}"
        raise


def export_either(context: CellContext, args: tuple[Any, ...]) -> tuple[Any, dict[str, str]]:
    """Strict export, else non-strict (the detail says which, and why not strict); when both fail, the strict
    error with the non-strict one in the detail."""
    try:
        return export_program(context, args, strict=True), {"export": "strict"}
    except StageFailure as strict_failure:
        try:
            strict_error = f"{error_type(strict_failure.error)}: {first_line(strict_failure.error)}"
            return export_program(context, args, strict=False), {"export": "non-strict", "strict_error": strict_error}
        except StageFailure as nonstrict_failure:
            other = nonstrict_failure.error
            strict_failure.prefix = "export: strict and non-strict both failed; strict: "
            strict_failure.detail.update(roundtrip_stage="export",
                                         nonstrict_error=f"{error_type(other)}: {first_line(other)}")
            raise strict_failure from None


def program_operators(program: Any) -> tuple[list[str], list[str]]:
    """The program's operators outside torch's own namespaces ("ns::name.overload"), and its higher-order ops."""
    operators: set[str] = set()
    higher_order: set[str] = set()
    for module in program.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            if node.op != "call_function":
                continue
            if isinstance(node.target, torch._ops.OpOverload):
                qualified = f"{node.target._schema.name}.{node.target._overloadname}"
                if qualified.split("::")[0] not in TORCH_NAMESPACES:
                    operators.add(qualified)
            elif isinstance(node.target, torch._ops.HigherOrderOperator):
                higher_order.add(node.target.name())
    return sorted(operators), sorted(higher_order)


def consumer_source(context: CellContext) -> str:
    """The source the run imported the spec from; a path made absolute, since the fresh process may start elsewhere."""
    source = context.spec.source
    path = Path(source)
    return str(path.resolve()) if source.endswith(".py") or path.is_file() else source


def watched_modules(context: CellContext) -> list[str]:
    """Module names that mean "the kernel's module was imported", beyond the catalogue's and path plug-ins' prefixes."""
    names = {getattr(context.spec.launch, "__module__", None)}
    if not context.spec.source.endswith(".py"):
        names.add(context.spec.source)
    return sorted(name for name in names if name and not name.startswith(("torch", "triton", "builtins")))


def fresh_process_detail(report: dict[str, Any], fresh: FreshRun) -> dict[str, Any]:
    """Which process loaded the file and what of the kernel's it had imported when: the proof it was fresh."""
    keys = ("pid", "kernel_modules_at_start", "kernel_modules_before_load", "kernel_modules_at_end", "stage_s")
    return {"how": fresh.how, "cell_pid": os.getpid(), **{key: report.get(key) for key in keys},
            "timeline": fresh_timeline(fresh, report.get("clock"))}


def child_failure(report: dict[str, Any], returncode: int, output: str, source: str, imported: bool) -> StageFailure:
    """The fresh process's failure as evidence: its stage, its exception's type and first line, what it lacked."""
    name = report.get("stage", "load")
    detail: dict[str, Any] = {"roundtrip_stage": name}
    if returncode < 0:
        error: BaseException = FreshProcessFailed(f"fresh process died with signal {-returncode} in stage {name}")
    else:
        child_type = str(report.get("error_type") or "FreshProcessFailed")
        message = report.get("error", output.strip()[-300:])
        error = type(child_type, (FreshProcessFailed,), {})(message)  # the child's type name, as the evidence's
    prefix = f"{name} in a fresh process: "
    missing = report.get("missing_operators") or []
    if missing:
        detail["missing_operators"] = missing
        listed = ", ".join(op.rsplit(".", 1)[0] for op in missing)
        noun = "operator" if len(missing) == 1 else "operators"
        if imported:
            prefix = f"{name} in a fresh process: {noun} {listed} not registered even after importing {source}: "
        else:
            prefix = f"{name} in a fresh process needs {noun} {listed}: import the module that registers it ({source}): "
    if report.get("cause"):  # what torch logged instead of raising (the deserializer's own error)
        detail["cause"] = report["cause"]
    return StageFailure(STAGE_OF.get(name, "load"), error, prefix=prefix, detail=detail)


def run_roundtrip(context: CellContext, consumer_imports: bool) -> dict[str, Any]:
    if context.fresh_python is None:
        raise SkipCell("export_roundtrip needs a fresh Python, which only a run can give (harness.run)")
    if consumer_imports and not context.built.rebuild_as:
        raise SkipCell("export_roundtrip rebuilds the op in the fresh process; this op does not say how it was built")
    args = context.inputs()
    program, how_exported = export_either(context, args)
    operators, higher_order = program_operators(program)
    paths = {name: context.workdir / f"roundtrip-{name}" for name in ("program.pt2", "inputs.pt", "outputs.pt",
                                                                      "report.json", "job.json", "log.txt")}

    def save() -> Path:
        with roundtrip_stage("save", context):
            torch.export.save(program, str(paths["program.pt2"]))
        return paths["program.pt2"]

    saved_file = built_artifact(context, "saved-program", program, args, save)
    torch.save(list(args), paths["inputs.pt"])
    expected = expected_result(context, args)
    source = consumer_source(context)
    consumer_import = {"source": source, "kernel": context.spec.name, "style": context.built.rebuild_as} \
        if consumer_imports else None
    job = {"program": str(saved_file), "inputs": str(paths["inputs.pt"]), "outputs": str(paths["outputs.pt"]),
           "report": str(paths["report.json"]), "consumer_import": consumer_import, "operators": operators,
           "watched_modules": watched_modules(context), "poison_reserve": tensor_bytes(expected.output)}
    paths["job.json"].write_text(json.dumps(job))

    with roundtrip_stage("load", context):  # the whole fresh process: its own report splits the time
        fresh = context.fresh_python(LOADER_MODULE, [str(paths["job.json"])], paths["log.txt"], FRESH_PROCESS_TIMEOUT_S)
    report = read_report(paths["report.json"])
    if report.get("status") != "ok":
        failure = child_failure(report, fresh.returncode, fresh.output, source, consumer_imports)
        failure.detail["fresh_process"] = fresh_process_detail(report, fresh)
        raise failure
    saved = torch.load(paths["outputs.pt"])
    for name, before, after in zip(context.spec.argument_names, args, saved["arguments"]):
        if name in context.spec.mutates_args:  # what the program wrote in the fresh process, copied back here
            before.copy_(after)
    output = saved["outputs"]
    output = output[0] if context.spec.num_outputs <= 1 and len(output) == 1 else tuple(output)
    with roundtrip_stage("check", context):
        check_result(context, output, args, expected)
    return {**how_exported, "program_bytes": saved_file.stat().st_size,
            "program_operators": operators, "program_higher_order_ops": higher_order,
            "consumer_imports": source if consumer_imports else None,
            "fresh_process": fresh_process_detail(report, fresh)}


def run_export_roundtrip(context: CellContext) -> dict[str, Any]:
    return run_roundtrip(context, consumer_imports=True)


def run_export_roundtrip_bare(context: CellContext) -> dict[str, Any]:
    return run_roundtrip(context, consumer_imports=False)
