"""What the CPU tier adds to Triton's interpreter so that autotuned kernels can be asked at all.

Under TRITON_INTERPRET=1 with no GPU, Triton's autotuner has no benchmarker: it asks the
active GPU driver for one, finds none, and raises "0 active drivers" before any kernel
runs. The CPU tier gives autotuners without their own `do_bench` a wall-clock benchmark,
so the interpreter picks a config and runs it. Nothing else in Triton or torch is touched,
and results headers record that it was done (environment.interpreter_autotune).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

INTERPRETER_AUTOTUNE = "wall-clock benchmark of each config (harness, CPU tier)"


def wall_clock_bench(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> Any:
    """Time one call; return the shape Triton's benchmarkers return (a list when quantiles are asked)."""
    started = time.perf_counter()
    kernel_call()
    elapsed_ms = (time.perf_counter() - started) * 1e3
    return [elapsed_ms] * len(quantiles) if quantiles else elapsed_ms


def enable_autotune_on_interpreter() -> None:
    from triton.runtime.autotuner import Autotuner

    if getattr(Autotuner, "_tcm_interpreter_bench", False):
        return
    original = Autotuner.do_bench

    def do_bench(self: Any) -> Any:
        if getattr(self, "_do_bench", None) is None:
            return wall_clock_bench
        return original.fget(self)

    Autotuner.do_bench = property(do_bench)  # type: ignore[method-assign,assignment]
    Autotuner._tcm_interpreter_bench = True  # type: ignore[attr-defined]
