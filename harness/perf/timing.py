"""How one call is timed: host time by the wall clock, device time by CUDA events, host time again by torch.profiler.

Host time per call: the wall time of a batch of back-to-back calls, closed by one device synchronize,
divided by the batch's size. No synchronize inside the batch, so a launch-bound call measures what the
host spends launching it, and a bandwidth-bound one the device's throughput (the queue fills up). The
batch size is calibrated from the warm-up so a batch lasts about `batch_s`.

Device time per call: a CUDA-event pair around each call, with L2 flushed before it as
`triton.testing.do_bench` does, and the GPU held busy (torch.cuda._sleep) long enough for the host to
enqueue the whole call first, so host overhead is not in it (device_time). None on the CPU tier.

The self-check: the same calls under torch.profiler (CPU activity only), each inside a record_function
range; the median CPU time of those ranges against the wall-clock median. Two independent clocks;
their ratio is reported, not corrected for.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from harness.perf.stats import StopRule, stop_reason, summarize

PROFILER_RANGE = "tcm_perf_call"
MAX_BATCH = 10_000
PROFILED_CALLS = 50
L2_FLUSH_BYTES = 256 * 2**20  # above any GPU's L2 (H100: 50 MiB), as triton's do_bench flushes it
MAX_HOLD_S = 0.05
DEVICE_SAMPLES_PER_TAKE = 20


def synchronizer(device: Any) -> Callable[[], None]:
    import torch

    if getattr(device, "type", str(device)) == "cuda":
        return lambda: torch.cuda.synchronize(device)
    return lambda: None


def warm_up(call: Callable[[], Any], calls: int, sync: Callable[[], None]) -> float:
    """Run `calls` calls, each synchronized; return the median seconds per call (for calibrating batches)."""
    times = []
    for _ in range(max(1, calls)):
        started = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def batch_size(seconds_per_call: float, batch_s: float) -> int:
    if seconds_per_call <= 0:
        return MAX_BATCH
    return max(1, min(MAX_BATCH, round(batch_s / seconds_per_call)))


def sample_until_stable(take: Callable[[], list[float]], rule: StopRule) -> dict[str, Any]:
    """Call `take` (which returns one or more samples) until the stop rule says stop; summarize what it gave."""
    samples: list[float] = []
    started = time.perf_counter()
    while True:
        samples.extend(take())
        reason = stop_reason(samples, time.perf_counter() - started, rule)
        if reason:
            return summarize(samples, reason)


def host_time(call: Callable[[], Any], sync: Callable[[], None], calls_per_sample: int, rule: StopRule) -> dict[str, Any]:
    def take() -> list[float]:
        sync()
        started = time.perf_counter()
        for _ in range(calls_per_sample):
            call()
        sync()
        return [(time.perf_counter() - started) / calls_per_sample]

    summary = sample_until_stable(take, rule)
    summary["calls_per_sample"] = calls_per_sample
    summary["method"] = "wall clock (time.perf_counter) over a batch of calls, one synchronize at its end"
    return summary


def _sleep_cycles_per_second(device: Any) -> float:
    """How many `torch.cuda._sleep` cycles the GPU spins per second, measured once with CUDA events."""
    import torch

    cycles = 10_000_000
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    start.record()
    torch.cuda._sleep(cycles)
    end.record()
    torch.cuda.synchronize(device)
    return cycles / max(start.elapsed_time(end) / 1e3, 1e-9)


def device_time(call: Callable[[], Any], rule: StopRule, host_s: float, device: Any,
                samples_per_take: int = DEVICE_SAMPLES_PER_TAKE) -> dict[str, Any]:
    """CUDA events around each call, with the L2 flushed and the GPU held busy before it.

    The hold (torch.cuda._sleep for twice the call's host time) lets the host enqueue the whole call before
    the start event fires, so a style's launch overhead is not counted as device time; triton's do_bench
    relies on its L2 flush alone for that, which is shorter than a slow style's host time.
    """
    import torch

    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device)
    hold_cycles = int(min(2 * host_s, MAX_HOLD_S) * _sleep_cycles_per_second(device))

    def take() -> list[float]:
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                 for _ in range(samples_per_take)]
        for start, end in pairs:
            flush.zero_()
            torch.cuda._sleep(hold_cycles)
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(device)
        return [start.elapsed_time(end) / 1e3 for start, end in pairs]

    summary = sample_until_stable(take, rule)
    summary["method"] = (f"CUDA events around each call; before it, {L2_FLUSH_BYTES >> 20} MiB zeroed (L2 flushed) "
                         "and the GPU held by torch.cuda._sleep for 2x the host time, so launch overhead is not counted")
    return summary


def profiler_check(call: Callable[[], Any], sync: Callable[[], None], wall_median_s: float,
                   calls: int = PROFILED_CALLS) -> dict[str, Any]:
    """Host time per call by torch.profiler's CPU clock for the same calls, and its ratio to the wall clock's."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    sync()
    with profile(activities=[ProfilerActivity.CPU]) as profiled:
        for _ in range(calls):
            with record_function(PROFILER_RANGE):
                call()
        sync()
    times_us = [event.cpu_time_total for event in profiled.events() if event.name == PROFILER_RANGE]
    if not times_us:
        return {"calls": 0, "error": "torch.profiler recorded no call range", "torch": torch.__version__}
    median_s = statistics.median(times_us) / 1e6
    return {"median_s": median_s, "calls": len(times_us),
            "ratio_to_wall": median_s / wall_median_s if wall_median_s > 0 else None,
            "method": "torch.profiler CPU activity, median CPU time of a record_function range around each call"}
