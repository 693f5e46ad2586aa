"""The repository's committed GPU results: what the commands that read the published run default to."""

from __future__ import annotations

from pathlib import Path

_REPO = Path(__file__).resolve().parents[3]
# The results the shipped docs (reports/api-choice.md) are generated from: the committed GPU run.
# The nightly job's pull requests (and a maintainer's accepted GPU run) commit reports/gpu-results.jsonl,
# which then supersedes the run committed with the tests (tests/fixtures/ feeds goldens and stays put).
GPU_FIXTURE_RESULTS = _REPO / "tests" / "fixtures" / "gpu-h100-torch2.11.0+cu130-triton3.6.0-libstdcxx-preload.jsonl"
PUBLISHED_GPU_RESULTS = _REPO / "reports" / "gpu-results.jsonl"
COMMITTED_GPU_RESULTS = PUBLISHED_GPU_RESULTS if PUBLISHED_GPU_RESULTS.exists() else GPU_FIXTURE_RESULTS


def published_results(tier: str) -> Path | None:
    """The published results of a tier, where it has them and they are here: what a run of it weighs its cells by
    when no --durations-from names a file (its order, and its time left)."""
    path = {"gpu": PUBLISHED_GPU_RESULTS}.get(tier)
    return path if path is not None and path.is_file() else None
