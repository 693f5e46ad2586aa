"""The parent side of `harness perf`: one worker process at a time, each record written when its kernel and mode end.

One at a time, on purpose: two measurements sharing the GPU or the cores would time each other.
A worker that dies or overruns its limit is recorded as crash or timeout at each of its sizes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.perf.combine import combine_sizes
from harness.perf.plan import PerfJob
from harness.perf.stats import StopRule
from harness.perf_results import PerfRecord

CACHE_VARIABLES = ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR")


@dataclasses.dataclass(frozen=True)
class WorkerSettings:
    tier: str
    kernels_from: tuple[str, ...]
    rule: StopRule
    warmup: int
    batch_s: float
    timeout_s: float
    seed: int = 0


def _failed(job: PerfJob, outcome: str, error: str, log: Path) -> list[PerfRecord]:
    return [PerfRecord(kernel=job.kernel, style=job.style, mode=job.mode, size=size, outcome=outcome, stage="run",
                       error_type="WorkerProcess", error=error, detail={"log": str(log)}) for size in job.sizes]


def run_job(job: PerfJob, settings: WorkerSettings, workdir: Path) -> list[PerfRecord]:
    """Time one job in a fresh Python with empty compile caches; never raises for what the job did."""
    workdir.mkdir(parents=True, exist_ok=True)
    request = {"kernel": job.kernel, "style": job.style, "mode": job.mode, "sizes": list(job.sizes),
               "tier": settings.tier, "kernels_from": list(settings.kernels_from), "seed": settings.seed,
               "rule": dataclasses.asdict(settings.rule), "warmup": settings.warmup, "batch_s": settings.batch_s,
               "workdir": str(workdir)}
    request_path, output_path, log_path = workdir / "request.json", workdir / "records.json", workdir / "worker.log"
    request_path.write_text(json.dumps(request), encoding="utf-8")
    environment = dict(os.environ) | {variable: str(workdir / variable.lower()) for variable in CACHE_VARIABLES}
    try:
        with open(log_path, "w", encoding="utf-8") as log:
            completed = subprocess.run([sys.executable, "-m", "harness.perf.worker", str(request_path), str(output_path)],
                                       stdout=log, stderr=subprocess.STDOUT, env=environment, timeout=settings.timeout_s)
        returncode: int | None = completed.returncode
    except subprocess.TimeoutExpired:
        returncode = None
    finished = _read_records(output_path)
    if returncode == 0 and len(finished) == len(job.sizes):
        return finished
    if returncode is None:
        outcome, error = "timeout", f"the worker ran past its limit of {settings.timeout_s:g} s"
    else:
        tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
        how = f"signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
        outcome, error = "crash", f"the worker process ended with {how}: {tail[0][:300]}"
    return finished + _failed(dataclasses.replace(job, sizes=job.sizes[len(finished):]), outcome, error, log_path)


def _read_records(path: Path) -> list[PerfRecord]:
    """The records a worker finished (it rewrites the file after each size); none when it wrote nothing."""
    if not path.exists():
        return []
    return [PerfRecord.from_record(record) for record in json.loads(path.read_text(encoding="utf-8"))]


def run_jobs(jobs: list[PerfJob], settings: WorkerSettings, write: Callable[[PerfRecord], None],
             progress: Callable[[str], None] = print, processes: int = 1) -> int:
    """Run every job, each in `processes` fresh Pythons, handing each combined record to `write`; returns how
    many records were timed.

    The jobs of one kernel and mode run in rounds: process 1 of every style, then process 2 of every style...,
    so slow drift of the machine touches every style of a comparison alike, and process i of a style pairs with
    process i of native. A job that did not time every size is not asked again. A kernel and mode is written
    when its last round ends (an interrupted run keeps the kernels and modes it finished)."""
    timed = 0
    root = Path(tempfile.mkdtemp(prefix="tcm-perf-"))
    groups: dict[tuple[str, str], list[PerfJob]] = {}
    for job in jobs:
        groups.setdefault((job.kernel, job.mode), []).append(job)
    number, total = 0, len(jobs) * processes
    for group in groups.values():
        measured: dict[PerfJob, list[list[PerfRecord]]] = {job: [] for job in group}
        for round_number in range(1, processes + 1):
            for job in group:
                if measured[job] and not all(record.timed for record in measured[job][-1]):
                    total -= 1
                    continue
                number += 1
                workdir = root / f"{number:04d}-{job.kernel}-{job.style}-{job.mode}-p{round_number}"
                records = run_job(job, settings, workdir)
                measured[job].append(records)
                if all(record.timed for record in records):  # its caches and packages; a failed job's log is its evidence
                    shutil.rmtree(workdir, ignore_errors=True)
                outcomes = ", ".join(f"{r.size}: {r.outcome}" for r in records)
                which = f" process {round_number}/{processes}" if processes > 1 else ""
                progress(f"[{number}/{total}] {job.kernel}/{job.style}/{job.mode}{which} ({outcomes})")
        for job in group:
            for record in combine_sizes(measured[job]):
                write(record)
                timed += record.timed
    if not any(root.iterdir()):
        root.rmdir()
    else:
        progress(f"the folders of the jobs that did not time every size, with their logs: {root}")
    return timed
