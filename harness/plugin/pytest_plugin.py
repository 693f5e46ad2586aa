"""The pytest plugin: parametrizes the suites in matrix/ with cells, runs each isolated, records every result.

It stays inert in test runs that collect no matrix suite. Results are attached to the
test report (`user_properties`) and written by the controlling process, so they cross
pytest-xdist's process boundary as plain records.
"""

from __future__ import annotations

import datetime
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.plugin.progress import Progress
from harness.results import CellResult, ResultsWriter, header_record, read_results
from harness.run.loader_zygote import read_warmup
from harness.run.options import add_pytest_options
from harness.run.repeat import RepeatError, parse_repeat, run_repeated
from harness.run.resume import ResumeError, check_resumable, repair_torn_tail
from harness.run.selection import Cell, SelectionError, chosen_kernels, chosen_pipelines, chosen_styles, select_cells
from harness.run.shard import ShardError, load_durations, parse_shard, shard_cells
from harness.run.zygote_python import STARTED_VARIABLE
from harness.vocab import CONTROL_STYLE, PIPELINES

pytest_plugins = ["harness.plugin.xdist_hooks"]  # GPU pinning of xdist workers, and the controller's side of worker isolation
RESULT_PROPERTY = "matrix_cell"
DEFAULT_TIMEOUT_S = {"gpu": 300.0, "cpu": 600.0}
EXPECTED_DIR = Path(__file__).resolve().parents[2] / "matrix" / "expected"
_state_key = pytest.StashKey["MatrixState"]()
_loader_key = pytest.StashKey[Path]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("triton-compat-matrix", "triton-compat-matrix: kernel x style x pipeline cells")
    add_pytest_options(group)  # harness.run.options: the same table builds `harness run`'s flags
    group.addoption("--matrix-progress", action="store_true",
                    help="a live count instead of pytest's per-test output (what `harness run` asks)")


class MatrixState:
    """Per-process state, made on first use so that runs collecting no matrix suite never import torch."""

    def __init__(self, config: pytest.Config) -> None:
        from harness.domain.registry import load_specs
        from harness.run.environment import enter_tier, resolve_tier

        option = config.option
        self.config = config
        self.tier = resolve_tier(option.matrix_tier)
        enter_tier(self.tier)
        self.kernels_from: list[str] = list(option.kernels_from)
        self.specs = load_specs(self.kernels_from)
        self.kernels = chosen_kernels(option.matrix_kernel, self.specs, self.kernels_from, option.matrix_with_catalogue)
        self.styles = chosen_styles(option.matrix_style, option.matrix_all, self.tier)
        self.pipelines = chosen_pipelines(option.matrix_pipeline, option.matrix_all, self.tier)
        self.isolation: str = option.matrix_isolation
        self._point_at_loader()
        self.cold_cache: bool = option.matrix_cold_cache
        self.gpu = os.environ.get("CUDA_VISIBLE_DEVICES") if getattr(config, "workerinput", {}).get("tcm_gpu") else None
        self.timeout_s: float = option.matrix_timeout or DEFAULT_TIMEOUT_S[self.tier]
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        workerinput = getattr(config, "workerinput", None)
        self.worker_started_by = os.environ.get(STARTED_VARIABLE, "spawn") if workerinput is not None else None
        self.controls: dict[tuple[str, str], CellResult] = {}
        self.baseline = _load_baseline(option.matrix_baseline_dir or str(EXPECTED_DIR), self.tier)
        self.repeat = parse_repeat(option.matrix_repeat, "--matrix-repeat")
        self.shard = parse_shard(option.matrix_shard, "--matrix-shard") if option.matrix_shard else None
        durations = load_durations(option.matrix_durations_from) if option.matrix_durations_from else None
        in_shard = shard_cells(select_cells(self.kernels, self.styles, self.pipelines), self.shard, durations)
        done = self._resume_from(option.matrix_resume)
        self.planned = [cell for cell in in_shard if cell.id not in done]
        self.durations = durations if durations is not None else _published_durations(self.tier)
        self._private_caches()

    def _point_at_loader(self) -> None:
        """Where this process's aoti_fresh_process loads go: with `zygote`, the run's zygote (the one the xdist
        controller made, harness.plugin.xdist_hooks, or this process's own); never one inherited from another run."""
        from harness.plugin.xdist_hooks import LOADER
        from harness.run.loader_zygote import LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE

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
        from harness.run.environment import describe

        results = check_resumable(path, describe(self.tier))  # checked before the file is touched
        if _is_controller(self.config):  # before any worker reads it; the cells read above stay the same
            repair_torn_tail(path)
        for cell in results.cells:
            if cell.style == CONTROL_STYLE:
                self.controls[(cell.kernel, cell.pipeline)] = cell
        return {cell.id for cell in results.cells}

    def run_options(self) -> dict[str, Any]:
        """What the header records of --matrix-shard, --matrix-durations-from and --matrix-repeat, when given."""
        option = self.config.option
        options = {"shard": str(self.shard) if self.shard else None, "durations_from": option.matrix_durations_from,
                   "repeat": self.repeat if self.repeat > 1 else None}
        return {key: value for key, value in options.items() if value is not None}

    def _private_caches(self) -> None:
        """One Inductor and Triton cache per worker, so concurrent workers never race on a cache entry.

        A folder the user named is kept. One under the harness's own root came from the process that started
        this one (an xdist controller sets its own before it starts its workers) and is replaced: keeping it made
        every worker of a run share the controller's caches (measured on the H100: concurrent first AOTInductor
        compiles left a package with an empty JSON file)."""
        from harness.run.environment import caches_root

        shared = caches_root()
        root = shared / f"{os.getppid()}-{self.worker}"
        for variable, name in (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton")):
            inherited = os.environ.get(variable)
            if inherited is None or Path(inherited).is_relative_to(shared):
                os.environ[variable] = str(root / name)


PUBLISHED_RESULTS = {"gpu": Path(__file__).resolve().parents[2] / "reports" / "gpu-results.jsonl"}


def _published_durations(tier: str) -> dict[str, float] | None:
    """Cell durations of the published results of this tier, to order a run's groups; None when there are none."""
    path = PUBLISHED_RESULTS.get(tier)
    if path is None or not path.is_file():
        return None
    try:
        return load_durations(str(path))
    except ShardError:
        return None


def loader_dir(config: pytest.Config) -> Path:
    """This run's loader-zygote folder, made once by the process that owns the run (harness.run.loader_zygote)."""
    if _loader_key not in config.stash:
        from harness.run.loader_zygote import make_loader_dir

        config.stash[_loader_key] = make_loader_dir()
    return config.stash[_loader_key]


def point_at_loader_zygote(directory: Path | str, owner_pid: int) -> None:
    """Fresh-process AOTI cells of this process, and of the cell processes it makes, use that zygote."""
    from harness.run.loader_zygote import LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE

    os.environ[LOADER_DIR_VARIABLE] = str(directory)
    os.environ[LOADER_OWNER_VARIABLE] = str(owner_pid)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _loader_key in config.stash:
        from harness.run.loader_zygote import stop

        stop(config.stash[_loader_key])
        del config.stash[_loader_key]


def _load_baseline(directory: str, tier: str) -> dict[str, str] | None:
    """The reviewed expected outcomes for this torch/triton/tier, if any were recorded."""
    if directory == "none":
        return None
    from harness.report.baseline import load_baseline
    from harness.run.environment import describe

    return load_baseline(directory, describe(tier))


def matrix_state(config: pytest.Config) -> MatrixState:
    if _state_key not in config.stash:
        from harness.domain.registry import KernelSourceError

        try:
            config.stash[_state_key] = MatrixState(config)
        except (SelectionError, KernelSourceError, ShardError, ResumeError, RepeatError) as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[_state_key]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "matrix_cell" not in metafunc.fixturenames:
        return
    state = matrix_state(metafunc.config)
    family = getattr(metafunc.module, "PIPELINES", PIPELINES)
    cells = [cell for cell in state.planned if cell.pipeline in family]  # after --matrix-shard and --matrix-resume
    metafunc.parametrize(
        "matrix_cell",
        [pytest.param(cell, id=cell.id, marks=pytest.mark.xdist_group(cell.group)) for cell in cells],
    )


def _matrix_cell(item: pytest.Item) -> Cell | None:
    callspec = getattr(item, "callspec", None)
    cell = callspec.params.get("matrix_cell") if callspec is not None else None
    return cell if isinstance(cell, Cell) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the placeholder items of suites whose pipelines were all filtered out (pytest's empty parameter set);
    put the cells longest group first (harness.run.shard.longest_groups_first) by --matrix-durations-from, else by
    the published results of this tier, so that no long group starts last and bounds the run."""
    empty = [item for item in items if "matrix_cell" in getattr(item, "fixturenames", ()) and _matrix_cell(item) is None]
    if empty:
        config.hook.pytest_deselected(items=empty)
        items[:] = [item for item in items if item not in empty]
    cells = {item: cell for item in items if (cell := _matrix_cell(item)) is not None}
    if not cells or not matrix_state(config).durations:
        return
    from harness.run.shard import longest_groups_first

    durations = matrix_state(config).durations or {}
    rank = {cell.id: position for position, cell in enumerate(longest_groups_first(list(cells.values()), durations))}
    items[:] = sorted(cells, key=lambda item: rank[cells[item].id]) + [item for item in items if item not in cells]


@pytest.fixture
def matrix_run(request: pytest.FixtureRequest) -> Any:
    """Call with a Cell: runs it isolated, records it on the test report, and turns it into a pytest outcome."""
    state = matrix_state(request.config)

    def run(cell: Cell) -> CellResult:
        result = run_cell(state, cell)
        request.node.user_properties.append((RESULT_PROPERTY, result.to_record()))
        expected = state.baseline.get(result.id) if state.baseline is not None else None
        assert_outcome(result, expected)
        return result

    return run


def _request(state: MatrixState, cell: Cell) -> Any:
    from harness.run.cell import CellRequest

    return CellRequest(cell.kernel, cell.style, cell.pipeline, state.tier, kernels_from=state.kernels_from, worker=state.worker,
                       cold_cache=state.cold_cache)


def run_cell(state: MatrixState, cell: Cell) -> CellResult:
    from harness.domain.pipelines.requirements import skip_reason
    from harness.run.cell import result_for
    from harness.run.isolation import run_isolated

    request = _request(state, cell)
    reason = skip_reason(state.specs[cell.kernel], cell.pipeline, state.tier)
    if reason:  # known without building anything: no process spent on it
        return result_for(request, "skip", reason=reason, detail={"decided_by": "parent"})
    result = run_repeated(lambda: run_isolated(request, state.timeout_s, state.isolation), state.repeat)
    if state.gpu is not None:  # the GPU this worker was pinned to (harness.plugin.xdist_hooks)
        result.detail["gpu"] = state.gpu
    if state.worker_started_by is not None:  # how this xdist worker started (harness.run.zygote_python)
        result.detail["worker_start"] = state.worker_started_by
    result.detail["cpu_threads"] = _cpu_threads()  # what the run's share of the cores came to in torch here
    if cell.style == CONTROL_STYLE:
        state.controls[(cell.kernel, cell.pipeline)] = result
    elif result.outcome not in ("pass", "skip"):
        judge_by_control(state, cell, result)
    return result


def _cpu_threads() -> int:
    """This process's intra-op threads: its cells' (a forked cell inherits them; a new Python reads the same
    OMP_NUM_THREADS, harness.run.environment.share_cores)."""
    import torch

    return torch.get_num_threads()


def judge_by_control(state: MatrixState, cell: Cell, result: CellResult) -> None:
    """A style's failure in a pipeline where the pure-PyTorch control also fails is the environment's: `env`.

    The control normally ran first in this worker. When it did not (a replacement worker got the rest of the
    group), it runs now; in worker mode in a process of its own, because this worker holds whatever the failed
    cell left: after a CUDA fault every CUDA call here raises until the worker retires (measured on the H100).
    """
    key = (cell.kernel, cell.pipeline)
    if key not in state.controls:
        from harness.run.isolation import run_isolated

        control_cell = Cell(cell.kernel, CONTROL_STYLE, cell.pipeline)
        control_request = _request(state, control_cell)
        isolation = "process" if state.isolation == "worker" else state.isolation
        state.controls[key] = run_repeated(lambda: run_isolated(control_request, state.timeout_s, isolation), state.repeat)
    mark_env(result, state.controls[key])


def mark_env(result: CellResult, control: CellResult) -> None:
    """Make a non-passing style's result `env` when the control failed too, keeping its own outcome and the control's error."""
    if control.outcome in ("pass", "skip") or result.outcome in ("pass", "skip"):
        return
    result.control = {k: getattr(control, k) for k in ("outcome", "stage", "error_type", "error")}
    result.reason = (
        f"the native control is {control.outcome} in {result.pipeline} "
        f"({control.stage}: {control.error_type}: {control.error}); own outcome was {result.outcome}"
    )
    result.detail["own_outcome"] = result.outcome
    result.outcome = "env"


def evidence_line(result: CellResult) -> str:
    if result.outcome in ("skip", "env"):
        return result.reason or ""
    if result.outcome == "pass":
        return ""
    return f"{result.outcome} in stage {result.stage}: {result.error_type}: {result.error}"


def assert_outcome(result: CellResult, expected: str | None = None) -> None:
    """A recorded cell is a finished measurement: its non-pass outcome lives in the results file, not in pytest's.

    The test fails only when the cell regressed against the reviewed baseline of this environment (the baseline
    expects `pass` and it did not pass); a skip or an env stays a pytest skip with its reason."""
    if expected == "pass" and result.outcome != "pass":
        pytest.fail(f"{result.id}: regressed, the baseline expects pass: {evidence_line(result)}", pytrace=False)
    if result.outcome == "skip":
        pytest.skip(result.reason or "skipped")
    if result.outcome == "env":
        pytest.skip(f"env: {result.reason}")


# ---- the controlling process: results file, progress, summary ----

def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def command_line() -> list[str]:
    """How this run was started, as a person would type it."""
    program = Path(sys.argv[0])
    if program.name == "__main__.py":
        return ["python", "-m", program.parent.name] + sys.argv[1:]
    return [program.name] + sys.argv[1:]


def default_results_path(environment: dict[str, Any]) -> Path:
    from harness.run.environment import environment_tag

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(".matrix-results") / f"results-{environment_tag(environment)}-{stamp}.jsonl"


def pytest_configure(config: pytest.Config) -> None:
    """On the controller: refuse to overwrite results, validate names early, and start recording."""
    if not _is_controller(config):
        return
    option = config.option
    path = option.matrix_results
    resume = option.matrix_resume
    if resume and path and Path(path).resolve() != Path(resume).resolve():
        raise pytest.UsageError(f"--matrix-resume {resume} appends to that file; --matrix-results names another ({path})")
    if path and not resume and Path(path).exists() and not option.matrix_overwrite:
        raise pytest.UsageError(f"{path}: results file exists; pass --matrix-overwrite to replace it")
    if (option.matrix_kernel or option.matrix_style or option.matrix_pipeline or option.kernels_from
            or resume or option.matrix_shard or option.matrix_repeat != "1"):
        matrix_state(config)  # bad names, shard, repeat or resume file: one error before anything runs
    config.pluginmanager.register(ResultsRecorder(config), "triton-compat-matrix-recorder")


class ResultsRecorder:
    """Writes each cell's record as its report arrives, prints progress, and the summary at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.writer: ResultsWriter | None = None
        self.results_path: Path | None = None
        self.finished = 0
        self.started_at = time.time()  # the run's start: the header is written only when the first cell ends
        self.progress: Progress | None = None
        if config.option.matrix_progress:
            terminal = config.pluginmanager.get_plugin("terminalreporter")
            live = terminal is not None and terminal.isatty()
            self.progress = Progress(len(matrix_state(config).planned), self.started_at, live=live,
                                     write=(terminal.rewrite if live else terminal.write_line) if terminal else print)

    def _open_writer(self) -> ResultsWriter:
        from harness.run.environment import describe

        state = matrix_state(self.config)
        environment = describe(state.tier)
        started = datetime.datetime.fromtimestamp(self.started_at, datetime.timezone.utc).isoformat(timespec="seconds")
        option = self.config.option
        chosen = option.matrix_resume or option.matrix_results
        path = Path(chosen) if chosen else default_results_path(environment)
        kernels = {name: {"features": list(spec.features), "description": spec.description, "source": spec.source}
                   for name, spec in state.specs.items() if name in state.kernels}
        header = header_record(environment, started, command_line(),
                               isolation=state.isolation, cold_cache=state.cold_cache,
                               worker_start=getattr(option, "matrix_worker_start", None),
                               cell_timeout_s=state.timeout_s, kernels=kernels,
                               started_at=round(self.started_at, 3), zygote_warmup_s=self._zygote_warmup_s(),
                               **state.run_options())
        self.results_path = path
        return ResultsWriter(path, header, append=bool(option.matrix_resume))  # resuming keeps the file's own header

    def _zygote_warmup_s(self) -> float | None:
        """The zygote's warm-up where the workers are forked from it: serial time before the first worker starts.

        Elsewhere a zygote starts when a cell first asks for it, while other cells run, so it is not recorded."""
        if _loader_key not in self.config.stash or getattr(self.config.option, "matrix_worker_start", None) != "zygote":
            return None
        warmup = read_warmup(self.config.stash[_loader_key])
        return warmup["warmup_s"] if warmup else None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        records = [value for name, value in report.user_properties if name == RESULT_PROPERTY]
        if not records or report.when != "call":
            return
        if self.writer is None:
            self.writer = self._open_writer()
        result = CellResult.from_record(dict(records[0]))  # type: ignore[call-overload]
        self.writer.write_cell(result)
        if result.style == CONTROL_STYLE:  # judges a style whose worker dies (harness.plugin.xdist_hooks)
            matrix_state(self.config).controls[(result.kernel, result.pipeline)] = result
        self.finished += 1
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        if self.progress is not None:
            self.progress.record(result.outcome)
            return
        evidence = evidence_line(result)
        line = f"[{self.finished}] {result.id} {result.outcome} {result.duration_s:.1f}s"
        terminal.write_line(line + (f"  {evidence[:160]}" if evidence else ""))

    def pytest_report_teststatus(self, report: Any) -> tuple[str, str, str] | None:
        """With --matrix-progress the live count stands for the per-test dots and words."""
        if self.progress is None or report.when != "call" or \
                not any(name == RESULT_PROPERTY for name, _ in report.user_properties):
            return None
        return report.outcome, "", ""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.writer is None or self.results_path is None:
            return
        self.writer.close()
        from harness.report.summary import render_summary

        terminalreporter.section("triton-compat-matrix")
        terminalreporter.write_line(render_summary(read_results(self.results_path)))
        if self.progress is None:  # `harness run` names its files itself
            terminalreporter.write_line(f"results: {self.results_path}")
