"""The matrix's per-process state, shared by the pytest plugin's hooks and xdist's controller hooks.

Made on first use (`matrix_state`), so that a pytest run that collects no matrix suite never imports torch.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from harness.report.compare.baseline import load_baseline
from harness.report.markdown.committed import published_results
from harness.results import CellResult
from harness.run.caches import seed_this_process, use_caches_of
from harness.run.cell import artifacts_shared
from harness.run.earlier import (
    ResumeError,
    ReuseError,
    cell_keys,
    check_resumable,
    outcome_options,
    repair_torn_tail,
    reused_cells,
    run_inputs,
)
from harness.run.environment import describe, enter_tier, resolve_tier
from harness.run.options import DEFAULT_TIMEOUT_S, EXPECTED_DIR
from harness.run.order import OrderError, parse_order
from harness.run.repeat import RepeatError, parse_repeat
from harness.run.selection import SelectionError, chosen_kernels, chosen_pipelines, chosen_styles, select_cells
from harness.run.shard import ShardError, load_durations, parse_shard, shard_cells
from harness.run.startup import LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE, STARTED_VARIABLE, make_loader_dir, stop
from harness.vocab import CONTROL_STYLE

RESULT_PROPERTY = "matrix_cell"
# What the controller hands each xdist worker (harness.plugin.xdist_hooks): its worker-mode folder, its GPU, the loader
# zygote, the run's tier, the results file the controller writes, the durations the cells are ordered by.
WORKER_ROOT, GPU, LOADER, TIER, RESULTS_FILE = "tcm_worker_root", "tcm_gpu", "tcm_loader", "tcm_tier", "tcm_results"
DURATIONS = "tcm_durations"
REUSED = "tcm_reused"  # the ids of the cells the controller copied from a --matrix-reuse file
_state_key = pytest.StashKey["MatrixState"]()
_loader_key = pytest.StashKey[Path]()


def is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


class MatrixState:
    """Per-process state, made on first use so that runs collecting no matrix suite never import torch."""

    def __init__(self, config: pytest.Config) -> None:
        from harness.domain.registry import load_specs  # deferred: imports the kernels, and torch, after enter_tier
        option = config.option
        self.config = config
        self.tier = resolve_tier(option.matrix_tier)
        enter_tier(self.tier)
        self.kernels_from: list[str] = list(option.kernels_from)
        self.specs = load_specs(self.kernels_from)
        self.kernels = chosen_kernels(option.matrix_kernel, self.specs, self.kernels_from,
                                      getattr(option, "matrix_with_catalogue", False))
        self.styles = chosen_styles(option.matrix_style, option.matrix_all, self.tier)
        self.pipelines = chosen_pipelines(option.matrix_pipeline, option.matrix_all, self.tier)
        self.isolation: str = option.matrix_isolation
        self._point_at_loader()
        self.cold_cache: bool = option.matrix_cold_cache
        self.share_artifacts: bool = artifacts_shared(not option.matrix_no_shared_artifacts, self.cold_cache)
        self.gpu = os.environ.get("CUDA_VISIBLE_DEVICES") if getattr(config, "workerinput", {}).get("tcm_gpu") else None
        self.timeout_s: float = option.matrix_timeout or DEFAULT_TIMEOUT_S[self.tier]
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        workerinput = getattr(config, "workerinput", None)
        self.worker_started_by = os.environ.get(STARTED_VARIABLE, "spawn") if workerinput is not None else None
        self.controls: dict[tuple[str, str], CellResult] = {}
        # where a worker finds a control that another worker recorded (harness.plugin.pytest_plugin.judge_by_control)
        self.results_file: str | None = (workerinput or {}).get(RESULTS_FILE)
        self.baseline = _load_baseline(option.matrix_baseline_dir or str(EXPECTED_DIR), self.tier)
        self.repeat = parse_repeat(option.matrix_repeat, "--matrix-repeat")
        self.order = parse_order(getattr(option, "matrix_order", None) or "longest-first", "--matrix-order")
        self.shard = parse_shard(option.matrix_shard, "--matrix-shard") if option.matrix_shard else None
        durations, self.durations = run_durations(option.matrix_durations_from, workerinput, self.tier)
        in_shard = shard_cells(select_cells(self.kernels, self.styles, self.pipelines), self.shard, durations)
        done = self._resume_from(option.matrix_resume)
        self.reuse_run: dict[str, Any] = {}
        self.keys: dict[str, str] = {}  # cell id -> content key: the controller's, for every cell it may record
        self.reused: dict[str, CellResult] = {}
        reused = self._reuse_from(option.matrix_reuse, [cell for cell in in_shard if cell.id not in done], workerinput)
        self.planned = [cell for cell in in_shard if cell.id not in done and cell.id not in reused]
        self._private_caches()

    def _point_at_loader(self) -> None:
        """Where this process's aoti_fresh_process loads go: with `zygote`, the run's zygote (the one the xdist
        controller made, harness.plugin.xdist_hooks, or this process's own); never one inherited from another run."""
        for variable in (LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE):
            os.environ.pop(variable, None)
        workerinput = getattr(self.config, "workerinput", None)
        if workerinput is not None and workerinput.get(LOADER):
            point_at_loader_zygote(*workerinput[LOADER])
        elif workerinput is None and not getattr(self.config.option, "numprocesses", None):
            point_at_loader_zygote(loader_dir(self.config), os.getpid())

    def _resume_from(self, path: str | None) -> set[str]:
        """Cells already in the file are not run again; its controls still judge the styles run now."""
        if not path:
            return set()
        results = check_resumable(path, describe(self.tier))  # checked before the file is touched
        if is_controller(self.config):  # before any worker reads it; the cells read above stay the same
            repair_torn_tail(path)
        for cell in results.cells:
            if cell.style == CONTROL_STYLE:
                self.controls[(cell.kernel, cell.pipeline)] = cell
        return {cell.id for cell in results.cells}

    def _reuse_from(self, path: str | None, cells: list[Any], workerinput: dict[str, Any] | None) -> set[str]:
        """The cells copied, not run (harness.run.earlier.cells): the controller computes every cell's key, whether or not
        --matrix-reuse is given, to write it in each record; a worker takes the ids the controller handed it."""
        if workerinput is not None:
            return set(workerinput.get(REUSED) or ())
        options = outcome_options(self.isolation, self.cold_cache, self.share_artifacts, self.timeout_s, self.repeat)
        self.reuse_run = run_inputs(describe(self.tier), options)
        self.keys = cell_keys(self.specs, cells, self.reuse_run)
        if not path:
            return set()
        self.reused, line = reused_cells(path, self.keys, self.reuse_run)
        if not self.config.option.matrix_progress:  # `harness run` says it itself (harness.run.plan)
            print(line)
        for cell in self.reused.values():  # a reused control judges the styles that run now
            if cell.style == CONTROL_STYLE:
                self.controls[(cell.kernel, cell.pipeline)] = cell
        return set(self.reused)

    def run_options(self) -> dict[str, Any]:
        """What the header records of --matrix-shard, --matrix-durations-from and --matrix-repeat, when given."""
        option = self.config.option
        options = {"shard": str(self.shard) if self.shard else None, "durations_from": option.matrix_durations_from,
                   "repeat": self.repeat if self.repeat > 1 else None,
                   "order": self.order if self.order != "longest-first" else None,
                   "artifacts": "shared in each worker by program fingerprint"
                   if self.share_artifacts and self.isolation == "worker" else "built by every cell"}
        return {key: value for key, value in options.items() if value is not None}

    def _private_caches(self) -> None:
        """One Inductor and Triton cache per worker of this run, so concurrent workers never race on a cache entry.

        Whatever the environment named is replaced, the user's folder too: importing Inductor writes torch's default
        folder into `TORCHINDUCTOR_CACHE_DIR`, so a run started by a process that had imported it (a test, a
        notebook) inherited that folder, kept it as the user's choice, and gave it to every worker. Workers
        compiling the same graph's package in one folder rewrite its files while another zips them: a fresh
        clone's suite met a package whose metadata JSON was empty, and a passing cell failed at load
        (docs/maintainers.md, "Order independence"). The run's folder lives under the temporary directory (set
        TMPDIR to move it); TCM_KEEP_CACHES names a folder that runs started one after another keep them in.
        The folder starts with the CPU ISA probe's outputs that runs before kept (harness.run.caches)."""
        use_caches_of(self.worker)
        seed_this_process()


def run_durations(durations_from: str | None, workerinput: dict[str, Any] | None,
                  tier: str) -> tuple[dict[str, float] | None, dict[str, float] | None]:
    """(the weights --durations-from names, the weights the run orders its cells by): read here by the controller,
    handed to each worker (DURATIONS, harness.plugin.xdist_hooks), so that no worker reads a results file again.

    Why: each of the GPU default's 90 workers (16 at the start, 74 replacing retired ones) read and checked the 4 MB
    of published results again; with the controller's handed over, a worker's collection at a run's start on an H200
    took 1.47 s median against 1.64 s (docs/benchmarks.md, "How the GPU default got from 465 s to 284 s")."""
    if workerinput is not None and DURATIONS in workerinput:
        given = workerinput[DURATIONS]
        return (given if durations_from else None), given
    durations = load_durations(durations_from) if durations_from else None
    return durations, (durations if durations is not None else _published_durations(tier))


def _published_durations(tier: str) -> dict[str, float] | None:
    """Cell durations of the published results of this tier, to order a run's groups; None when there are none."""
    path = published_results(tier)
    if path is None:
        return None
    try:
        return load_durations(str(path))
    except ShardError:
        return None


def loader_dir(config: pytest.Config) -> Path:
    """This run's loader-zygote folder, made once by the process that owns the run (harness.run.startup.loader_zygote)."""
    if _loader_key not in config.stash:
        ahead = getattr(config.option, "matrix_zygote_ahead", None)  # started by `harness run` (harness.run.startup.zygote_ahead)
        config.stash[_loader_key] = Path(ahead) if ahead else make_loader_dir()
    return config.stash[_loader_key]


def made_loader_dir(config: pytest.Config) -> Path | None:
    """This run's loader-zygote folder if this process made one, else None (nothing is started)."""
    return config.stash[_loader_key] if _loader_key in config.stash else None


def stop_loader(config: pytest.Config) -> None:
    """Stop the loader zygote this process started, if it did."""
    if _loader_key in config.stash:
        stop(config.stash[_loader_key])
        del config.stash[_loader_key]


def point_at_loader_zygote(directory: Path | str, owner_pid: int) -> None:
    """Fresh-process AOTI cells of this process, and of the cell processes it makes, use that zygote."""
    os.environ[LOADER_DIR_VARIABLE] = str(directory)
    os.environ[LOADER_OWNER_VARIABLE] = str(owner_pid)


def _load_baseline(directory: str, tier: str) -> dict[str, str] | None:
    """The reviewed expected outcomes for this torch/triton/tier, if any were recorded."""
    if directory == "none":
        return None
    return load_baseline(directory, describe(tier))


def matrix_state(config: pytest.Config) -> MatrixState:
    if _state_key not in config.stash:
        from harness.domain.registry import KernelSourceError  # deferred: imports the kernels, and torch

        try:
            config.stash[_state_key] = MatrixState(config)
        except (SelectionError, KernelSourceError, ShardError, ResumeError, ReuseError, RepeatError,
                OrderError) as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[_state_key]


def cell_id_of(nodeid: str) -> str | None:
    """`matrix/test_eager.py::test_cell[add/raw/eager]@add/eager` -> `add/raw/eager`."""
    match = re.search(r"\[([^\[\]]+/[^\[\]]+/[^\[\]]+)\]", nodeid)
    return match.group(1) if match else None
