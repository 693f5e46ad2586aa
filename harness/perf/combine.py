"""One perf record from the same measurement made in several fresh processes (`harness perf --processes K`).

Measured on the H100: at the launch-bound size the host time of one style moved by up to 2.4x from one fresh
process to the next (add, triton_op, eager: 42 to 104 µs over six processes), while each process's own 95%
interval was within 5%. One process is one draw of that spread, so a record keeps every process's median, in
the order the processes ran (process i of every style of a kernel and mode ran in the same round), and shows
the median one's statistics.
"""

from __future__ import annotations

import dataclasses
import statistics

from harness.perf_results import PerfRecord


def _median_index(values: list[float]) -> int:
    """The index of the median value (the lower middle one for an even count)."""
    order = sorted(range(len(values)), key=lambda index: values[index])
    return order[(len(values) - 1) // 2]


def combine(per_process: list[PerfRecord]) -> PerfRecord:
    """The records of one (kernel, style, mode, size) from each process, as one record.

    Every process timed it: the median process's statistics, plus `process_medians_s` (host and device) in
    round order and the median first call. Any process did not: the first such record, its outcome and evidence,
    with every process's outcome in `detail.process_outcomes`."""
    if len(per_process) == 1:
        return per_process[0]
    outcomes = [record.outcome for record in per_process]
    untimed = [record for record in per_process if not record.timed]
    if untimed:
        first = untimed[0]
        return dataclasses.replace(first, detail={**first.detail, "process_outcomes": outcomes})
    hosts = [record.host for record in per_process if record.host is not None]  # timed: every one has host stats
    host_medians = [stats["median_s"] for stats in hosts]
    chosen_index = _median_index(host_medians)
    chosen = per_process[chosen_index]
    host = {**hosts[chosen_index], "process_medians_s": host_medians}
    devices = [record.device for record in per_process if record.device is not None]
    device = chosen.device
    if chosen.device is not None and len(devices) == len(per_process):
        device = {**chosen.device, "process_medians_s": [stats["median_s"] for stats in devices]}
    firsts = [record.first_call_s for record in per_process if record.first_call_s is not None]
    return dataclasses.replace(chosen, host=host, device=device,
                               first_call_s=statistics.median(firsts) if firsts else chosen.first_call_s,
                               duration_s=round(sum(record.duration_s for record in per_process), 3),
                               detail={**chosen.detail, "processes": len(per_process)})


def combine_sizes(per_process: list[list[PerfRecord]]) -> list[PerfRecord]:
    """A job's records (one per size) from each process, combined size by size; a size that a process did not
    reach (it stopped at an earlier size) is combined from the processes that did."""
    sizes = list(dict.fromkeys(record.size for records in per_process for record in records))
    return [combine([record for records in per_process for record in records if record.size == size])
            for size in sizes]
