"""A worker that dies at the large size: the small size's record is kept, the large one is a crash with evidence."""

from pathlib import Path

from harness.perf.plan import PerfJob
from harness.perf.runner import WorkerSettings, run_job
from harness.perf.stats import StopRule

PLUGIN = str(Path(__file__).parent / "perf" / "crash_at_large_size.py")


def test_a_worker_killed_at_the_large_size_keeps_the_small_sizes_record(tmp_path):
    settings = WorkerSettings(tier="cpu", kernels_from=(PLUGIN,), warmup=1, batch_s=1e-3, timeout_s=120,
                              rule=StopRule(min_samples=6, max_samples=6, max_seconds=0.2))
    small, large = run_job(PerfJob("perf_crash_at_large_size", "raw", "eager", (64, 4096)), settings, tmp_path)
    assert (small.size, small.outcome, small.timed) == (64, "pass", True)
    assert (large.size, large.outcome, large.timed) == (4096, "crash", False)
    assert "signal 9" in large.error and large.detail["log"].endswith("worker.log")
