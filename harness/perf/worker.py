"""The child side of `harness perf`: one (kernel, style, mode) at each of its sizes, in a Python of its own.

`python -m harness.perf.worker REQUEST.json OUTPUT.json`. A fresh process per (kernel, style, mode),
with empty Triton and Inductor caches (the parent sets them), makes the first call's time a cold
compile that no earlier cell paid for, and keeps one cell's CUDA state away from the next.
The op is built, compiled and checked as the matrix pipelines do (harness.domain); the first call
at each size is checked against the reference before anything is timed.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.domain.evidence import error_type, first_line
from harness.perf import timing
from harness.perf.sizes import bytes_moved, flop_count
from harness.perf.stats import StopRule
from harness.run.environment import enter_tier
from harness.run.startup import warm_cpu_isa


def _prepare(mode: str, context: Any, size: int) -> tuple[Any, tuple[Any, ...], Any, float]:
    """(callable, inputs, first output, seconds of the first call including any compile, export and load)."""
    from harness.domain.pipelines.aoti import package  # deferred: imports torch, after enter_tier
    from harness.domain.pipelines.common import clone_args, staged  # deferred: imports torch, after enter_tier
    from harness.domain.pipelines.compile import compiled_call, compiled_for  # deferred: imports torch, after enter_tier

    args = context.inputs(size)
    first_args = clone_args(args) if context.spec.mutates_args else args  # the inputs stay fresh for the check
    started = time.perf_counter()
    if mode == "eager":
        call = context.built.call
        with staged("run", context):
            output = call(*first_args)
            context.synchronize()
    elif mode in ("compile", "cudagraphs"):
        call = compiled_for(mode, context.built.call)
        output = compiled_call(context, call, first_args)
    elif mode == "aoti":
        import torch

        path = package(context, args, strict=False)
        with staged("load", context):
            call = torch._inductor.aoti_load_package(str(path))
        with staged("run", context):
            output = call(*first_args)
            context.synchronize()
    else:
        raise ValueError(f"unknown mode {mode!r}")
    return call, args, output, time.perf_counter() - started


def _probe_inductor_cpu() -> float:
    """Seconds spent on Inductor's CPU vector-ISA probe, done before the first AOTInductor call is timed.

    AOTInductor's first build in a process probes the CPU's ISAs (a C++ compile per candidate; 43-49 s one after
    another on the H100), once per process and never again: a cost of the process, not of the kernel, which a
    first-call time would otherwise be mostly made of. It is asked here with the candidates compiled at once, as
    the matrix's zygote does, and kept in the record apart from the first call. Cached per process: 0 after the
    first size."""
    started = time.perf_counter()
    warm_cpu_isa()
    return round(time.perf_counter() - started, 3)


def measure_size(context: Any, mode: str, size: int, rule: StopRule, warmup: int, batch_s: float) -> dict[str, Any]:
    """Every number of one perf cell, or raises StageFailure/SkipCell for the parent to record."""
    from harness.domain.pipelines.common import check_result, expected_result  # deferred: imports torch, after enter_tier

    detail = {"inductor_cpu_probe_s": _probe_inductor_cpu()} if mode == "aoti" else {}
    call, args, output, first_call_s = _prepare(mode, context, size)
    expected = expected_result(context, args)
    if context.spec.mutates_args:  # the first call ran on copies: check a call on the inputs themselves
        output = call(*args)
        context.synchronize()
    check_result(context, output, args, expected)
    sync = timing.synchronizer(context.device)

    def invoke() -> Any:
        return call(*args)

    per_call = timing.warm_up(invoke, warmup, sync)
    calls_per_sample = timing.batch_size(per_call, batch_s)
    host = timing.host_time(invoke, sync, calls_per_sample, rule)
    device = timing.device_time(invoke, rule, host["median_s"], context.device) if context.device.type == "cuda" else None
    profiler = timing.profiler_check(invoke, sync, host["median_s"], calls=min(timing.PROFILED_CALLS, 5 * calls_per_sample))
    tensors = [a for a in args if hasattr(a, "dtype")]
    return {"host": host, "device": device, "profiler": profiler, "first_call_s": first_call_s, "detail": detail,
            "bytes_moved": bytes_moved(args, output), "flops": flop_count(context.spec, args),
            "dtype": str(tensors[0].dtype).removeprefix("torch.") if tensors else None}


def _size_folder(request: dict[str, Any], size: int) -> Path:
    """Where a size's files go (an AOTInductor package): the job's folder, which the runner removes after it."""
    folder = Path(request.get("workdir") or tempfile.mkdtemp(prefix="tcm-perf-")) / f"size-{size}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run_request(request: dict[str, Any], done: Any = lambda records: None) -> list[dict[str, Any]]:
    """One record per size; a failure at one size is that size's outcome, and the next size is still asked.

    `done(records)` is called after each size, so a process killed at the large size keeps the small one."""
    enter_tier(request["tier"])  # before any kernel module is imported
    import torch

    from harness.domain.machine import provided  # deferred: imports torch, after enter_tier
    from harness.domain.pipelines.common import CellContext, StageFailure  # deferred: imports torch, after enter_tier
    from harness.domain.registry import load_specs_once  # deferred: imports torch, after enter_tier
    from harness.domain.styles import SkipCell, build_style  # deferred: imports torch, after enter_tier

    kernel, style, mode = request["kernel"], request["style"], request["mode"]
    rule = StopRule(**request["rule"])
    torch.manual_seed(request["seed"])
    device = torch.device("cuda" if request["tier"] == "gpu" else "cpu")
    records = []
    spec = load_specs_once(request["kernels_from"])[kernel]
    try:
        built = build_style(spec, style)
    except Exception as exc:  # SkipCell included: the same evidence for every size
        outcome = {"outcome": "skip", "reason": str(exc)} if isinstance(exc, SkipCell) else {
            "outcome": "fail", "stage": "build", "error_type": error_type(exc), "error": first_line(exc)}
        return [{"kernel": kernel, "style": style, "mode": mode, "size": size, **outcome} for size in request["sizes"]]
    for size in request["sizes"]:
        started = time.perf_counter()
        record: dict[str, Any] = {"kernel": kernel, "style": style, "mode": mode, "size": size}
        context = CellContext(spec=spec, built=built, device=device, tier=request["tier"],
                              workdir=_size_folder(request, size), seed=request["seed"])
        try:
            with provided(spec.requires, request["tier"]):  # an allocator the kernel requires (harness.domain.machine)
                record |= {"outcome": "pass", **measure_size(context, mode, size, rule, request["warmup"], request["batch_s"])}
        except SkipCell as skip:
            record |= {"outcome": "skip", "reason": str(skip)}
        except StageFailure as failure:
            from harness.domain.checking import MismatchError  # deferred: imports torch, after enter_tier

            record |= {"outcome": "wrong" if isinstance(failure.error, MismatchError) else "fail", "stage": failure.stage,
                       "error_type": error_type(failure.error), "error": failure.prefix + first_line(failure.error)}
        except Exception as exc:  # a failure outside any stage is still evidence
            record |= {"outcome": "fail", "stage": "run", "error_type": error_type(exc), "error": first_line(exc)}
        record["duration_s"] = round(time.perf_counter() - started, 3)
        records.append(record)
        done(records)
    return records


def main(argv: list[str]) -> int:
    request_path, output_path = argv
    def save(records: list[dict[str, Any]]) -> None:
        write_text_atomic(output_path, json.dumps(records))

    save(run_request(json.loads(Path(request_path).read_text(encoding="utf-8")), save))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
