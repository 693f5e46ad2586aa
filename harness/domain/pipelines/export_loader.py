"""Load a saved ExportedProgram in a fresh process and run it, as a consumer of the file would.

Run as `python -m harness.domain.pipelines.export_loader JOB` (or forked by the run's loader zygote), where JOB
is a JSON file written by harness.domain.pipelines.export_roundtrip:
  program, inputs, outputs, report: paths;
  consumer_import: {"source", "kernel", "style"} to import the kernel's module and build the style's op first,
    as a consumer importing the library would (export_roundtrip), or null to import nothing of it
    (export_roundtrip_bare);
  operators: the program's operators ("ns::name.overload"), to say which of them this process lacks;
  watched_modules: the kernel's module names, to prove which were imported before the load.
Stages, in the order they run: `import` (the kernel's module and its op), `load` (torch.export.load and
.module()), `run`. The report (JSON) names the stage reached, the error's type and first line, the pid,
and the kernel modules present at start and before the load, and `clock`: when `main` started and ended
(time.time()), which the cell puts beside its own clock (harness.domain.fresh_run.fresh_timeline).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from harness.domain.evidence import error_type, first_line
from harness.domain.fresh_run import main_clock
from harness.domain.poison import poison_memory

KERNEL_MODULE_PREFIXES = ("kernels", "_tcm_user_kernels")
TORCH_LOGGERS = ("torch", "torch.export")


def read_report(path: Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def _write(path: Path, report: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(report))


def kernel_modules(watched: list[str]) -> list[str]:
    """The kernel modules imported in this process: the catalogue's, path plug-ins', and the watched names."""
    return sorted(name for name in sys.modules if name.startswith(KERNEL_MODULE_PREFIXES) or name in watched)


def missing_operators(operators: list[str]) -> list[str]:
    """The program's operators that this process has not registered (what a consumer must import)."""
    from torch._library.utils import lookup_op

    missing = []
    for qualified in operators:
        try:
            lookup_op(qualified)
        except (AttributeError, RuntimeError, ValueError):
            missing.append(qualified)
    return missing


def import_kernel_op(consumer_import: dict[str, str]) -> None:
    """Import the spec's module and build the style's op: the ops a library registers when it is imported."""
    from harness.domain.registry import specs_from_source  # deferred: a bare round trip loads without it
    from harness.domain.styles import build_style  # deferred: a bare round trip loads without it

    specs = {spec.name: spec for spec in specs_from_source(consumer_import["source"])}
    build_style(specs[consumer_import["kernel"]], consumer_import["style"])


class LoggedErrors(logging.Handler):
    """Keeps the exceptions torch logs instead of raising: torch.export.load logs the deserializer's error
    (which names the unresolved operator) and raises a RuntimeError that only says "check the warnings above"."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and isinstance(record.exc_info[1], BaseException):
            self.errors.append(record.exc_info[1])


def innermost(error: BaseException) -> BaseException:
    for _ in range(8):
        inner = error.__cause__ or error.__context__
        if inner is None:
            break
        error = inner
    return error


def main(argv: list[str]) -> int:
    main_started = time.time()
    job = json.loads(Path(argv[0]).read_text())
    report_path = Path(job["report"])
    watched = list(job.get("watched_modules", []))
    report: dict[str, Any] = {"status": "started", "stage": "import", "pid": os.getpid(),
                              "kernel_modules_at_start": kernel_modules(watched), "stage_s": {}}
    _write(report_path, report)

    def enter(stage: str) -> float:
        report["stage"] = stage
        _write(report_path, report)
        return time.perf_counter()

    logged = LoggedErrors()
    for logger in TORCH_LOGGERS:  # torch's loggers do not propagate: each is asked
        logging.getLogger(logger).addHandler(logged)
    try:
        started = enter("import")
        import torch

        if job.get("consumer_import"):
            import_kernel_op(job["consumer_import"])
        report["kernel_modules_before_load"] = kernel_modules(watched)
        report["stage_s"]["import"] = round(time.perf_counter() - started, 3)
        started = enter("load")
        module = torch.export.load(job["program"]).module()
        report["stage_s"]["load"] = round(time.perf_counter() - started, 3)
        started = enter("run")
        args = torch.load(job["inputs"])
        on_cuda = any(t.is_cuda for t in args if isinstance(t, torch.Tensor))
        poison_memory("cuda" if on_cuda else "cpu", job.get("poison_reserve", []))  # harness.domain.poison
        result = module(*args)
        if on_cuda:
            torch.cuda.synchronize()
        result = list(result) if isinstance(result, (list, tuple)) else [result]
        # The arguments go back too: a kernel that writes its inputs in place is judged by them.
        torch.save({"outputs": result, "arguments": list(args)}, job["outputs"])
        report["stage_s"]["run"] = round(time.perf_counter() - started, 3)
    except Exception as exc:
        report.update(status="error", error_type=error_type(exc), error=first_line(exc))
        if logged.errors:
            cause = innermost(logged.errors[-1])
            report["cause"] = f"{error_type(cause)}: {first_line(cause)}"
        if report["stage"] == "load":
            report["missing_operators"] = missing_operators(list(job.get("operators", [])))
    else:
        report["status"] = "ok"
    finally:
        for logger in TORCH_LOGGERS:
            logging.getLogger(logger).removeHandler(logged)
    report["kernel_modules_at_end"] = kernel_modules(watched)
    report["clock"] = main_clock(main_started, time.time())
    _write(report_path, report)
    return 0 if report["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
