"""AOTInductor: export, package, load and run; in this process or in a fresh one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from harness.domain.fresh_run import fresh_timeline
from harness.domain.pipelines.aoti_loader import extraction_in, read_report
from harness.domain.pipelines.common import CellContext, built_artifact, check_result, expected_result, staged
from harness.domain.pipelines.export import export_program
from harness.domain.poison import tensor_bytes
from harness.domain.styles import SkipCell

FRESH_PROCESS_TIMEOUT_S = 300


class FreshProcessFailed(RuntimeError):
    """The loader process failed; its own error type and first line are in the message, and `cell_detail` (what
    `staged` puts in the cell's detail) says which process it was."""

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.cell_detail = detail or {}


def package(context: CellContext, args: tuple[Any, ...], strict: bool) -> Path:
    """Export, then the package of that program: built here, or the worker's own build of the same program
    (harness.domain.pipelines.artifacts: the fingerprint covers the program and the arguments)."""
    inductor = torch._inductor
    if not hasattr(inductor, "aoti_compile_and_package") or not hasattr(inductor, "aoti_load_package"):
        raise SkipCell(f"torch {torch.__version__} has no aoti_compile_and_package/aoti_load_package")
    program = export_program(context, args, strict=strict)

    def build() -> Path:
        path = context.workdir / "cell.pt2"
        with staged("compile", context):
            inductor.aoti_compile_and_package(program, package_path=str(path))
        return path

    return built_artifact(context, "aoti-package", program, args, build)


def run_in_process(context: CellContext, strict: bool) -> dict[str, Any]:
    args = context.inputs()
    path = package(context, args, strict)
    with staged("load", context), extraction_in(context.workdir):
        runner = torch._inductor.aoti_load_package(str(path))
    expected = expected_result(context, args)
    with staged("run", context):
        output = runner(*args)
        context.synchronize()
    check_result(context, output, args, expected)
    return {"package_bytes": path.stat().st_size}


def run_aoti(context: CellContext) -> dict[str, Any]:
    return run_in_process(context, strict=False)


def run_aoti_strict(context: CellContext) -> dict[str, Any]:
    return run_in_process(context, strict=True)


def run_aoti_fresh_process(context: CellContext) -> dict[str, Any]:
    """Package here, then load and run in a Python that never imported the kernel's module (aoti_loader)."""
    args = context.inputs()
    path = package(context, args, strict=False)
    inputs_path, outputs_path, report_path = (context.workdir / n for n in ("inputs.pt", "outputs.pt", "loader.json"))
    torch.save(list(args), inputs_path)
    expected = expected_result(context, args)
    argv = [str(path), str(inputs_path), str(outputs_path), str(report_path), json.dumps(tensor_bytes(expected.output))]
    with staged("load", context):
        if context.fresh_python is None:
            raise SkipCell("aoti_fresh_process needs a fresh Python, which only a run can give (harness.run)")
        fresh = context.fresh_python("harness.domain.pipelines.aoti_loader", argv, context.workdir / "loader.log",
                                     FRESH_PROCESS_TIMEOUT_S)
        returncode, stderr, loader = fresh.returncode, fresh.output, fresh.how

    report = read_report(report_path)
    timeline = fresh_timeline(fresh, report.get("clock"))
    if report.get("status") != "ok":
        stage = report.get("stage", "load")
        if returncode < 0:
            message = f"loader process died with signal {-returncode} in stage {stage}"
        else:
            message = f"{report.get('error_type', 'unknown')}: {report.get('error', stderr.strip()[-300:])}"
        with staged(stage, context):
            raise FreshProcessFailed(message, {"loader": loader, "fresh_process": {"how": loader, "timeline": timeline}})
    saved = torch.load(outputs_path)
    for name, before, after in zip(context.spec.argument_names, args, saved["arguments"]):
        if name in context.spec.mutates_args:  # what the package wrote in the loader's process, copied back here
            before.copy_(after)
    output = saved["outputs"]
    output = output[0] if context.spec.num_outputs <= 1 and len(output) == 1 else tuple(output)
    check_result(context, output, args, expected)
    return {"package_bytes": path.stat().st_size, "loader_modules_with_kernels": report.get("kernel_modules", []),
            "loader": loader, "fresh_process": {"how": loader, "timeline": timeline}}


