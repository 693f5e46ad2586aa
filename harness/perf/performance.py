"""reports/performance.md from a perf results file: what each style costs, and is the hand-written kernel worth it.

Reads perf results only (harness.perf_results), never torch. Every ratio compares two records of one run on
one machine: a joined file (`perf-join`) keeps each kernel and mode whole from one run, and the one comparison
across modes (the kernel against torch.compile(reference)) is refused when its two sides come from two runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from harness.perf.gpu_peaks import SOURCE, peak_flops, peak_for
from harness.perf_results import MODES, PerfFile, PerfRecord
from harness.report.markdown.environment import CPU_TIER_NOTICE, environment_table, tier_of
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.vocab import CONTROL_STYLE, STYLES

NA = "n/a"
CPU_PERF_NOTICE = (
    "> **Interpreter times.** This run is the CPU tier: every time below is the time of Triton's interpreter "
    "(`TRITON_INTERPRET=1`) and of PyTorch on CPU tensors. It checks the harness; it says nothing about a GPU. "
    "There is no device time."
)


def microseconds(seconds: float | None) -> str:
    if seconds is None:
        return NA
    value = seconds * 1e6
    return f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def ratio(numerator: float | None, denominator: float | None) -> str:
    if numerator is None or not denominator:
        return NA
    return f"{numerator / denominator:.3g}x"


class PerfIndex:
    """The records of one file by (kernel, style, mode, size)."""

    def __init__(self, records: Iterable[PerfRecord]) -> None:
        self.by_key = {(r.kernel, r.style, r.mode, r.size): r for r in records}

    def get(self, kernel: str, style: str, mode: str, size: int) -> PerfRecord | None:
        return self.by_key.get((kernel, style, mode, size))

    def host(self, kernel: str, style: str, mode: str, size: int) -> float | None:
        record = self.get(kernel, style, mode, size)
        return record.host["median_s"] if record is not None and record.timed and record.host else None

    def device(self, kernel: str, style: str, mode: str, size: int) -> float | None:
        record = self.get(kernel, style, mode, size)
        return record.device["median_s"] if record is not None and record.timed and record.device else None


def process_medians(record: PerfRecord | None, clock: str = "host") -> list[float]:
    """Each process's median (`perf --processes K`), in round order; the one median of a one-process record."""
    stats = (record.host if clock == "host" else record.device) if record is not None and record.timed else None
    if not stats:
        return []
    return list(stats.get("process_medians_s") or [stats["median_s"]])


def paired_ratios(record: PerfRecord | None, control: PerfRecord | None) -> list[float]:
    """Host time over the control's, process i against process i (the same round), when both ran as many
    processes; else the two medians. Empty when either is untimed."""
    mine, theirs = process_medians(record), process_medians(control)
    if not mine or not theirs:
        return []
    if len(mine) == len(theirs):
        return [a / b for a, b in zip(mine, theirs) if b]
    return [statistics.median(mine) / statistics.median(theirs)] if statistics.median(theirs) else []


def overhead(index: PerfIndex, kernel: str, style: str, control: str, mode: str, size: int) -> float | None:
    """The median of the paired ratios of a style's host time to the control's."""
    ratios = paired_ratios(index.get(kernel, style, mode, size), index.get(kernel, control, mode, size))
    return statistics.median(ratios) if ratios else None


def _ordered(values: Iterable[str], order: tuple[str, ...]) -> list[str]:
    unique = set(values)
    return [v for v in order if v in unique] + sorted(unique - set(order))


def kernels_of(perf: PerfFile) -> list[str]:
    return list(dict.fromkeys(r.kernel for r in perf.records))


def sizes_of(perf: PerfFile, kernel: str) -> list[int]:
    return sorted({r.size for r in perf.records if r.kernel == kernel})


def not_timed(record: PerfRecord) -> str:
    """A non-timed record's outcome and its evidence, as the cell text."""
    evidence = ": ".join(part for part in (record.stage, record.error_type) if part)
    why = f"{evidence}: {record.error}" if record.error else (record.reason or "")
    return escape_cell(f"not timed: {record.outcome}" + (f" ({why})" if why else ""), limit=200)


def _spread(stats: dict[str, Any]) -> tuple[str, str, str]:
    ci = f"{microseconds(stats['ci_low_s'])} to {microseconds(stats['ci_high_s'])}"
    iqr = microseconds(stats["q3_s"] - stats["q1_s"])
    n = f"{stats['n']}" + ("" if stats.get("converged") else f" ({stats.get('stop')})")
    return ci, iqr, n


def _times(value: float | None) -> str:
    return NA if value is None else f"{value:.3g}x"


def _across(medians: list[float]) -> str:
    """Each process's host median, in round order: the spread one process would have hidden."""
    return " / ".join(microseconds(value) for value in medians) if len(medians) > 1 else NA


def kernel_table(perf: PerfFile, index: PerfIndex, kernel: str) -> str:
    headers = ["style", "mode", "size", "host median (µs)", "host 95% CI", "host IQR", "n", "device median (µs)",
               "device n", "first call (s)", f"host x {CONTROL_STYLE}", "host x raw", "host medians by process (µs)",
               "profiler / wall"]
    rows = []
    records = [r for r in perf.records if r.kernel == kernel]
    for mode in _ordered((r.mode for r in records), MODES):
        for size in sizes_of(perf, kernel):
            for style in _ordered((r.style for r in records), STYLES):
                record = index.get(kernel, style, mode, size)
                if record is None:
                    continue
                if not record.timed or record.host is None:
                    rows.append([style, mode, str(size), not_timed(record)] + [""] * (len(headers) - 4))
                    continue
                ci, iqr, n = _spread(record.host)
                device = record.device
                profiler = record.profiler or {}
                host = record.host["median_s"]
                rows.append([
                    style, mode, str(size), microseconds(host), ci, iqr, n,
                    microseconds(device["median_s"]) if device else NA,
                    str(device["n"]) + ("" if device.get("converged") else f" ({device.get('stop')})") if device else NA,
                    f"{record.first_call_s:.3f}" if record.first_call_s is not None else NA,
                    _times(overhead(index, kernel, style, CONTROL_STYLE, mode, size)),
                    _times(overhead(index, kernel, style, "raw", mode, size)),
                    _across(process_medians(record)),
                    f"{profiler['ratio_to_wall']:.2f}" if profiler.get("ratio_to_wall") else NA,
                ])
    return markdown_table(headers, rows)


def compile_comparison(perf: PerfFile, index: PerfIndex) -> str:
    """The forum thread's question: the user's kernel (raw, eager) against Inductor's code for the reference."""
    timing = "device" if tier_of(perf.environment) == "gpu" else "host"
    pick = index.device if timing == "device" else index.host
    rows = []
    for kernel in kernels_of(perf):
        for size in sizes_of(perf, kernel):
            mine, inductor = pick(kernel, "raw", "eager", size), pick(kernel, CONTROL_STYLE, "compile", size)
            runs = {record.run for record in (index.get(kernel, "raw", "eager", size),
                                              index.get(kernel, CONTROL_STYLE, "compile", size)) if record}
            if mine and inductor and len(runs) > 1:
                verdict = ("no comparison: the two were timed in different runs of a joined file "
                           f"(runs {', '.join(str(run) for run in sorted(runs, key=str))}); time them in one run")
                mine = inductor = None
            elif mine and inductor:
                verdict = (f"the Triton kernel is {inductor / mine:.3g}x faster" if inductor >= mine
                           else f"torch.compile(reference) is {mine / inductor:.3g}x faster")
            else:
                sides = (("raw eager", mine, index.get(kernel, "raw", "eager", size)),
                         ("torch.compile(reference)", inductor, index.get(kernel, CONTROL_STYLE, "compile", size)))
                verdict = "no comparison: " + ", ".join(f"{name} {_outcome(record)}" for name, value, record in sides
                                                        if not value)
            rows.append([kernel, str(size), microseconds(mine), microseconds(inductor), ratio(inductor, mine),
                         escape_cell(verdict, limit=200)])
    headers = ["kernel", "size", f"Triton kernel, raw launch ({timing} µs)", f"torch.compile(reference) ({timing} µs)",
               "compile / kernel", "answer"]
    return markdown_table(headers, rows)


def _outcome(record: PerfRecord | None) -> str:
    if record is None:
        return "not asked"
    return "timed" if record.timed else record.outcome


def throughput_table(perf: PerfFile, index: PerfIndex) -> tuple[str, str]:
    """(table, the sentence naming the peak it was measured against) at each kernel's largest size."""
    peak = peak_for(perf.environment.get("gpu"))
    rows = []
    for kernel in kernels_of(perf):
        size = max(sizes_of(perf, kernel))
        for style, mode in (("raw", "eager"), (CONTROL_STYLE, "compile"), (CONTROL_STYLE, "eager")):
            record = index.get(kernel, style, mode, size)
            device = index.device(kernel, style, mode, size)
            if record is None or not device:
                continue
            bandwidth = record.bytes_moved / device if record.bytes_moved else None
            flop_rate = record.flops / device if record.flops else None
            rows.append([kernel, str(size), f"{style} / {mode}", microseconds(device),
                         f"{bandwidth / 1e9:,.0f}" if bandwidth else NA,
                         f"{100 * bandwidth / peak.bytes_per_s:.0f}%" if bandwidth and peak else NA,
                         f"{flop_rate / 1e12:.2f}" if flop_rate else NA,
                         f"{100 * flop_rate / peak_flops(peak, record.dtype):.1f}%" if flop_rate and peak else NA])
    headers = ["kernel", "size", "style / mode", "device median (µs)", "GB/s", "of peak bandwidth", "TFLOP/s",
               "of peak FLOP/s"]
    if peak:
        source = (f"Peaks: {peak.label}, {peak.bytes_per_s / 1e12:.2f} TB/s, {peak.flops_fp32 / 1e12:.0f} TFLOP/s fp32, "
                  f"{peak.flops_16bit / 1e12:.0f} TFLOP/s bf16/fp16 ({SOURCE}; harness/perf/gpu_peaks.py).")
    elif perf.environment.get("gpu"):
        source = f"No peak is known for GPU {perf.environment.get('gpu')!r}: the fractions are n/a."
    else:
        source = "No GPU in this run: no device times, no fractions of a peak."
    return markdown_table(headers, rows) if rows else "No device times at the large size (none on the CPU tier).", source


def self_check(perf: PerfFile) -> str:
    """The agreement of the two host clocks at each kernel's launch-bound size, as one sentence."""
    smallest = {kernel: min(sizes_of(perf, kernel)) for kernel in kernels_of(perf)}
    ratios = [r.profiler["ratio_to_wall"] for r in perf.records
              if r.timed and r.profiler and r.profiler.get("ratio_to_wall") and r.size == smallest[r.kernel]]
    if not ratios:
        return "No record carries the profiler's self-check."
    return (f"At the launch-bound size, torch.profiler's CPU time per call divided by the wall clock's: median "
            f"{statistics.median(ratios):.2f}, from {min(ratios):.2f} to {max(ratios):.2f} over {len(ratios)} timed cells "
            "(1.00 = the two clocks agree; the profiler adds its own cost per recorded op, so above 1 is expected).")


def _method(header: dict[str, Any]) -> str:
    method = header.get("method") or {}
    rule = method.get("rule") or {}
    return (f"Each measurement: {method.get('warmup_calls', '?')} warm-up calls, then samples until the median's 95% "
            f"confidence interval lies within {100 * rule.get('rel_ci', 0):.0f}% of it (at least {rule.get('min_samples')}"
            f" samples; caps: {rule.get('max_samples')} samples or {rule.get('max_seconds')} s, the cap that stopped a "
            f"measurement is named beside its n). Host time: the wall clock over a batch of calls (about "
            f"{method.get('batch_ms', '?')} ms) with one synchronize at its end, per call. Device time: "
            "CUDA events around each call, L2 flushed and the GPU held busy before it so launch overhead is not "
            "counted. First call: the first call's wall time, "
            "including compile, export and load for the compiled modes; for aoti, Inductor's CPU ISA probe, paid once "
            "per process and not per kernel, is done before it and recorded apart (`detail.inductor_cpu_probe_s`). "
            "Order: "
            f"{method.get('order', 'unknown')}. Only cells that passed in `{header.get('matrix_results', '?')}` are timed.")


def render_performance(perf: PerfFile, png: str | None = None) -> str:
    """The whole Markdown report."""
    index = PerfIndex(perf.records)
    cpu = tier_of(perf.environment) == "cpu"
    lines = ["# Performance: what each wrapping style costs", ""]
    if cpu:
        lines += [CPU_TIER_NOTICE, "", CPU_PERF_NOTICE, ""]
    if perf.dropped_torn_line:
        lines += ["The perf file ended in a torn line (a killed run); that line was dropped.", ""]
    lines += [_method(perf.header), "", self_check(perf), ""]
    if png:
        lines += [f"![Host time over native by style and mode]({png})", ""]
    lines += ["## Is the hand-written kernel worth it?", "",
              "The user's Triton kernel launched directly against `torch.compile(reference)` (Inductor's own code), "
              "same inputs, same run.", "", compile_comparison(perf, index), ""]
    table, source = throughput_table(perf, index)
    lines += ["## Bandwidth and FLOP/s at the large size", "",
              "Bytes moved: the sum of every input and output tensor's bytes; FLOPs: the spec's `flops`. " + source,
              "", table, ""]
    for kernel in kernels_of(perf):
        lines += [f"## {escape_cell(kernel)}", "", kernel_table(perf, index, kernel), ""]
    lines += ["## Environment", "", environment_table(perf.header), ""]
    if perf.header.get("joined_from"):
        lines += ["Joined from these runs of the same machine (`harness perf-join`); each kernel and mode comes whole "
                  "from one run, so the ratios within a mode are never across runs:", ""]
        lines += [f"{index}. `{escape_cell(run.get('source'))}` (started {escape_cell(run.get('started'))}): "
                  f"{escape_cell(', '.join(run.get('kernel_modes') or []) or 'nothing')}"
                  for index, run in enumerate(perf.header["joined_from"])]
        lines.append("")
    return "\n".join(lines)
