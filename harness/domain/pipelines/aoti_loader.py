"""Load and run an AOTInductor package in a fresh process, as a deployment would.

Run as `python -m harness.domain.pipelines.aoti_loader PACKAGE INPUTS OUTPUTS REPORT [RESERVE]`. It imports torch
and nothing of the kernel's module, and poisons its memory before the run (harness.domain.poison; RESERVE: a JSON
list of the expected outputs' sizes in bytes, the blocks to reserve poisoned); the report says which stage it reached and
lists any kernel module that was imported anyway (proof it was fresh), and `clock`: when `main` started and ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.domain.fresh_run import main_clock
from harness.domain.poison import poison_memory

EXTRACTION_VARIABLE = "TMPDIR"  # where torch's package loader extracts a package (std::filesystem's temporary folder)


def read_report(path: Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


@contextlib.contextmanager
def extraction_in(folder: Path) -> Iterator[None]:
    """`aoti_load_package` extracts the package into a new `aotinductor_*` folder of the temporary folder, removed
    when the loaded model is freed; a load that fails leaves it there (two folders a failed load on torch 2.13:
    docs/maintainers.md, "Isolation"). Loads in this block extract into `folder` instead: the cell's own, removed
    with it. Torch 2.11 extracts into /tmp/XXXXXX whatever TMPDIR says: there nothing moves."""
    saved = os.environ.get(EXTRACTION_VARIABLE)
    os.environ[EXTRACTION_VARIABLE] = str(folder)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(EXTRACTION_VARIABLE, None)
        else:
            os.environ[EXTRACTION_VARIABLE] = saved


def _write(path: Path, report: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(report))


def main(argv: list[str]) -> int:
    main_started = time.time()
    package, inputs, outputs, report_path = (Path(a) for a in argv[:4])
    reserve = json.loads(argv[4]) if len(argv) > 4 else []
    report: dict[str, Any] = {"status": "started", "stage": "load"}
    _write(report_path, report)
    try:
        import torch

        with extraction_in(Path(report_path).parent):  # the cell's folder (the package may be another cell's)
            runner = torch._inductor.aoti_load_package(str(package))
        report["stage"] = "run"
        _write(report_path, report)
        args = torch.load(inputs)
        on_cuda = any(t.is_cuda for t in args if isinstance(t, torch.Tensor))
        poison_memory("cuda" if on_cuda else "cpu", reserve)
        result = runner(*args)
        if on_cuda:
            torch.cuda.synchronize()
        result = list(result) if isinstance(result, (list, tuple)) else [result]
        # The arguments go back too: a kernel that writes its inputs in place is judged by them.
        torch.save({"outputs": result, "arguments": list(args)}, outputs)
    except Exception as exc:
        text = str(exc).strip()
        report.update(status="error", error_type=type(exc).__name__, error=text.splitlines()[0] if text else "")
    else:
        report["status"] = "ok"
    report["kernel_modules"] = sorted(name for name in sys.modules if name.startswith(("kernels", "_tcm_user_kernels")))
    report["clock"] = main_clock(main_started, time.time())
    _write(report_path, report)
    return 0 if report["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
