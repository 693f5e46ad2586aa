"""Runs one cell in the current process: build the style, run the pipeline, turn what happened into a CellResult.

This is the child side of isolation: it runs in a process made for the cell (fork, process), or in a
pytest-xdist worker that is replaced after a fault (worker).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from harness.domain.artifact_store import ArtifactStore
from harness.domain.evidence import error_type, full_traceback, graph_break, most_specific_line
from harness.domain.machine import device_capability, provided
from harness.domain.user_code import in_user_code
from harness.results import CellResult
from harness.run.caches import CACHE_VARIABLES
from harness.run.compile_caches import disable_graph_caches
from harness.run.environment import enter_tier
from harness.vocab import cell_id, split_style


@dataclass
class CellRequest:
    kernel: str
    style: str
    pipeline: str
    tier: str
    kernels_from: list[str] = field(default_factory=list)
    seed: int = 0
    worker: str = "main"
    cold_cache: bool = False  # empty Inductor and Triton caches for this cell alone (--cold-cache)
    share_artifacts: bool = True  # may load a package or saved program the worker built from the same program

    @property
    def id(self) -> str:
        return cell_id(self.kernel, self.style, self.pipeline)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def artifacts_shared(share_artifacts: bool, cold_cache: bool) -> bool:
    """The one rule for both the run's header and each cell: a cell may load what its worker built only where
    sharing is on and its caches are not cold (a cold-cache cell builds everything itself)."""
    return share_artifacts and not cold_cache


def result_for(request: CellRequest, outcome: str, **fields: Any) -> CellResult:
    style, call_site = split_style(request.style)  # a call-site cell records its style and its site apart
    return CellResult(
        id=request.id, kernel=request.kernel, style=style, pipeline=request.pipeline,
        outcome=outcome, worker=request.worker, call_site=call_site, **fields,
    )


def execute_cell(request: CellRequest, workdir: Path, fresh_python: Callable[..., Any],
                 stage_marker: Callable[[str], None] | None = None, artifacts: ArtifactStore | None = None) -> CellResult:
    """Never raises for what the cell did: every exception becomes an outcome with its stage and evidence.

    `fresh_python` (harness.run.startup.fresh_python.run_fresh_python, given by the caller) makes the fresh Python a
    pipeline may ask for; this module does not import it, so that the zygote and the isolation modules that
    import this one are not imported back. `artifacts` is the worker's store of packages and saved programs
    (harness.domain.artifact_store), given only where cells share a process; a cell with a cold cache or with
    `share_artifacts` off builds its own."""
    _enter_cell(request, workdir)
    import torch

    from harness.domain.cell_outcome import failure_verdict  # deferred: imports torch, after enter_tier
    from harness.domain.pipelines import RUNNERS, artifact_fetcher  # deferred: imports torch, after enter_tier
    from harness.domain.pipelines.common import CellContext, StageFailure, staged  # deferred: imports torch, after enter_tier
    from harness.domain.pipelines.requirements import skip_reason  # deferred: imports torch, after enter_tier
    from harness.domain.registry import load_specs_once  # deferred: imports torch, after enter_tier
    from harness.domain.styles import SkipCell, build_style  # deferred: imports torch, after enter_tier

    started = time.perf_counter()
    torch.manual_seed(request.seed)
    device = torch.device("cuda" if request.tier == "gpu" else "cpu")
    stage_seconds: dict[str, float] = {}  # filled by `staged`; says where a cell's time went (detail.stage_s)
    judged: dict[str, str] = {}  # filled by the value checks: which tolerance rule judged each value (detail.tolerance)
    spec = None
    context = None
    try:
        spec = load_specs_once(request.kernels_from)[request.kernel]
        reason = skip_reason(spec, request.pipeline, request.tier, device_capability(request.tier) if spec.requires else None)
        if reason:
            raise SkipCell(reason)
        if stage_marker:
            stage_marker("build")
        with staged("build"):
            built = build_style(spec, request.style)
        stage_seconds["build"] = round(time.perf_counter() - started, 3)
        context = CellContext(spec=spec, built=built, device=device, tier=request.tier, workdir=workdir,
                              seed=request.seed, stage_marker=stage_marker, stage_seconds=stage_seconds, judged=judged,
                              fresh_python=partial(fresh_python, tier=request.tier))
        if artifacts is not None and artifacts_shared(request.share_artifacts, request.cold_cache):
            context.fetch_artifact = artifact_fetcher(artifacts, request.id, context.reused)
        with provided(spec.requires, request.tier):  # what the spec requires the harness to set up (an allocator)
            detail = RUNNERS[request.pipeline](context)
        result = result_for(request, "pass", detail=detail)
    except SkipCell as skip:
        result = result_for(request, "skip", reason=str(skip))
    except StageFailure as failure:
        verdict = failure_verdict(failure)
        result = result_for(request, verdict.outcome, stage=verdict.stage, error_type=verdict.error_type,
                            error=verdict.error, detail=failure.detail, traceback=full_traceback(failure.error))
        if graph_break(failure.error):
            result.detail["graph_break"] = graph_break(failure.error)
    except Exception as exc:  # a harness or spec bug outside any stage: still evidence, never a crash
        result = result_for(request, "fail", stage="build", error_type=error_type(exc), error=most_specific_line(exc),
                            traceback=full_traceback(exc))
    return _with_provenance(result, spec, context, started, stage_seconds, judged)


def _enter_cell(request: CellRequest, workdir: Path) -> None:
    """This process made ready for the cell, before anything compiles: its compile caches (empty ones for a cold-cache
    cell; the caller's environment is restored after the cell), its tier, then torch without the graph caches."""
    if request.cold_cache:
        for variable, name in CACHE_VARIABLES:
            os.environ[variable] = str(workdir / "cold-cache" / name)
    enter_tier(request.tier)
    import torch  # noqa: F401  (imported after enter_tier, as the cell's first import of it)

    disable_graph_caches()  # no graph cache entry of an earlier cell is reused


def _with_provenance(result: CellResult, spec: Any, context: Any, started: float, stage_seconds: dict[str, float],
                     judged: dict[str, str]) -> CellResult:
    """`result` with where its error and its time came from: the error line located in the user's code, the duration,
    the seconds per stage, the cell whose artifact it reused, the tolerance rule that judged each value."""
    if spec is not None and result.error:  # a location in the error line names the user's code, not the harness's
        result.error = in_user_code(result.error, spec)
    result.duration_s = round(time.perf_counter() - started, 3)
    if stage_seconds:
        result.detail["stage_s"] = stage_seconds
    if context is not None and context.reused:  # which cell built the package or saved file this cell loaded
        result.detail["reused"] = context.reused
    if judged:
        result.detail["tolerance"] = judged
    return result

