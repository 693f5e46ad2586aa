"""The pytest plugin: parametrizes the suites in matrix/ with cells, runs each isolated, records every result.

It stays inert in test runs that collect no matrix suite. Results are attached to the
test report (`user_properties`) and written by the controlling process, so they cross
pytest-xdist's process boundary as plain records.
"""

from __future__ import annotations

import datetime
import random
import time
from pathlib import Path
from typing import Any

import pytest

from harness.domain.spec import kernel_header
from harness.plugin.progress import Progress
from harness.plugin.state import (
    RESULT_PROPERTY,
    MatrixState,
    cell_id_of,
    is_controller,
    made_loader_dir,
    matrix_state,
    stop_loader,
)
from harness.report.markdown.summary import render_summary
from harness.results import REUSE_INPUTS, REUSE_KEY, CellResult, ResultsWriter, header_record, read_results, recorded_cell
from harness.run.cell import CellRequest, result_for
from harness.run.environment import describe, environment_tag
from harness.run.isolation import run_isolated
from harness.run.options import FORKED_ISOLATION, add_pytest_options
from harness.run.plan import command_line
from harness.run.repeat import run_repeated
from harness.run.selection import Cell
from harness.run.shard import longest_groups_first
from harness.run.startup import read_warmup
from harness.run.verdict import evidence_line, mark_env
from harness.time_left import TimeLeft
from harness.vocab import CONTROL_STYLE, PIPELINES

pytest_plugins = ["harness.plugin.xdist_hooks"]  # GPU pinning of xdist workers, and the controller's side of worker isolation


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("triton-compat-matrix", "triton-compat-matrix: kernel x style x pipeline cells")
    add_pytest_options(group)  # harness.run.options: the same table builds `harness run`'s flags
    group.addoption("--matrix-progress", action="store_true",
                    help="a live count instead of pytest's per-test output (what `harness run` asks)")
    group.addoption("--matrix-zygote-ahead", metavar="DIR", default=None,
                    help="the folder of a zygote this process started before pytest (what `harness run` does: "
                         "harness.run.startup.zygote_ahead); the run forks its workers from it")


def pytest_unconfigure(config: pytest.Config) -> None:
    stop_loader(config)


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
    the published results of this tier, so that no long group starts last and bounds the run; --matrix-order
    reverses that order or shuffles it (harness order-check compares two orders)."""
    empty = [item for item in items if "matrix_cell" in getattr(item, "fixturenames", ()) and _matrix_cell(item) is None]
    if empty:
        config.hook.pytest_deselected(items=empty)
        items[:] = [item for item in items if item not in empty]
    cells = {item: cell for item in items if (cell := _matrix_cell(item)) is not None}
    if not cells:
        return
    ordered = list(cells)
    durations = matrix_state(config).durations
    if durations:
        rank = {cell.id: position for position, cell in enumerate(longest_groups_first(list(cells.values()), durations))}
        ordered.sort(key=lambda item: rank[cells[item].id])
    order = matrix_state(config).order
    if order == "reversed":
        ordered.reverse()
    elif isinstance(order, int):
        random.Random(order).shuffle(ordered)
    items[:] = ordered + [item for item in items if item not in cells]


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
    return CellRequest(cell.kernel, cell.style, cell.pipeline, state.tier, kernels_from=state.kernels_from, worker=state.worker,
                       cold_cache=state.cold_cache, share_artifacts=state.share_artifacts)


def run_cell(state: MatrixState, cell: Cell) -> CellResult:
    from harness.domain.pipelines.requirements import (
        skip_reason,  # deferred: imports torch; a pytest run that collects no matrix suite must not
    )
    request = _request(state, cell)
    reason = skip_reason(state.specs[cell.kernel], cell.pipeline, state.tier)
    if reason:  # known without building anything: no process spent on it
        return result_for(request, "skip", reason=reason, detail={"decided_by": "parent"})
    result = run_repeated(lambda: run_isolated(request, state.timeout_s, state.isolation), state.repeat)
    if state.gpu is not None:  # the GPU this worker was pinned to (harness.plugin.xdist_hooks)
        result.detail["gpu"] = state.gpu
    if state.worker_started_by is not None:  # how this xdist worker started (harness.run.startup.zygote_python)
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

    The control normally ran first in this worker. When it did not (the worker that ran it died mid-group, and
    this one got the rest), the control that worker recorded is read from the results file the controller writes:
    running it again in a new Python cost 7 to 10 s on the H100, twice per `tensor_subclass` group
    (docs/maintainers.md, "Isolation"). Only where no record is found (that, or a selection that left the control
    out) does it run now; in worker mode in a process of its own, because this worker holds whatever the failed
    cell left: after a CUDA fault every CUDA call here raises until the worker retires (measured on the H100).
    That process is forked from the run's zygote, as a new worker is (harness.run.isolation, `forked`).
    """
    key = (cell.kernel, cell.pipeline)
    control_cell = Cell(cell.kernel, CONTROL_STYLE, cell.pipeline)
    if key not in state.controls and state.results_file:
        recorded = recorded_cell(state.results_file, control_cell.id)
        if recorded is not None:
            state.controls[key] = recorded
    if key not in state.controls:
        control_request = _request(state, control_cell)
        isolation = FORKED_ISOLATION if state.isolation == "worker" else state.isolation
        state.controls[key] = run_repeated(lambda: run_isolated(control_request, state.timeout_s, isolation), state.repeat)
    mark_env(result, state.controls[key])


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

def default_results_path(environment: dict[str, Any]) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(".matrix-results") / f"results-{environment_tag(environment)}-{stamp}.jsonl"


def pytest_configure(config: pytest.Config) -> None:
    """On the controller: refuse to overwrite results, validate names early, and start recording."""
    if not is_controller(config):
        return
    option = config.option
    path = option.matrix_results
    resume = option.matrix_resume
    if resume and path and Path(path).resolve() != Path(resume).resolve():
        raise pytest.UsageError(f"--matrix-resume {resume} appends to that file; --matrix-results names another ({path})")
    if path and not resume and Path(path).exists() and not option.matrix_overwrite:
        raise pytest.UsageError(f"{path}: results file exists; pass --matrix-overwrite to replace it")
    if (option.matrix_kernel or option.matrix_style or option.matrix_pipeline or option.kernels_from
            or resume or option.matrix_reuse or option.matrix_shard or option.matrix_repeat != "1"
            or option.matrix_order != "longest-first"):
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
            state = matrix_state(config)
            self.progress = Progress(len(state.planned), self.started_at, live=live,
                                     write=(terminal.rewrite if live else terminal.write_line) if terminal else print,
                                     time_left=TimeLeft((cell.id for cell in state.planned), state.durations))
        self._write_reused()

    def _write_reused(self) -> None:
        """The cells --matrix-reuse copies go first, before any worker starts: a style run now finds its reused
        control there (judge_by_control), and a run that reuses every cell still writes its file."""
        if self.config.option.matrix_reuse:
            state = matrix_state(self.config)
            for cell in state.reused.values():
                if self.writer is None:
                    self.writer = self._open_writer()
                self.writer.write_cell(cell)

    def _open_writer(self) -> ResultsWriter:
        state = matrix_state(self.config)
        environment = describe(state.tier)
        started = datetime.datetime.fromtimestamp(self.started_at, datetime.timezone.utc).isoformat(timespec="seconds")
        option = self.config.option
        chosen = option.matrix_resume or option.matrix_results
        path = Path(chosen) if chosen else default_results_path(environment)
        kernels = {name: kernel_header(spec) for name, spec in state.specs.items() if name in state.kernels}
        header = header_record(environment, started, command_line(),
                               isolation=state.isolation, cold_cache=state.cold_cache,
                               worker_start=getattr(option, "matrix_worker_start", None),
                               cell_timeout_s=state.timeout_s, kernels=kernels,
                               started_at=round(self.started_at, 3), **self._zygote_warmup(),
                               **state.run_options(), **{REUSE_INPUTS: state.reuse_run})
        self.results_path = path
        return ResultsWriter(path, header, append=bool(option.matrix_resume))  # resuming keeps the file's own header

    def _zygote_warmup(self) -> dict[str, float | None]:
        """The zygote's warm-up where the workers are forked from it: how long it took, serial time before the first
        worker starts, and when it ended (`harness run` starts it before the run's start: harness.run.startup.zygote_ahead).

        Elsewhere a zygote starts when a cell first asks for it, while other cells run, so it is not recorded."""
        directory = made_loader_dir(self.config)
        warmup = None
        if directory is not None and getattr(self.config.option, "matrix_worker_start", None) == "zygote":
            warmup = read_warmup(directory)
        return {"zygote_warmup_s": warmup["warmup_s"] if warmup else None,
                "zygote_ready_at": warmup["ready_at"] if warmup else None}

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        if self.progress is not None:
            self.progress.started(cell_id_of(nodeid))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker that died (a crash, a hang ended, or one that left after a CUDA error): xdist replaces it."""
        if error and self.progress is not None:
            self.progress.worker_replaced()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        records = [value for name, value in report.user_properties if name == RESULT_PROPERTY]
        if not records or report.when != "call":
            return
        if self.writer is None:
            self.writer = self._open_writer()
        result = CellResult.from_record(dict(records[0]))  # type: ignore[call-overload]
        key = matrix_state(self.config).keys.get(result.id)
        if key is not None:  # what a later --reuse compares (harness.run.earlier.cells)
            result.detail[REUSE_KEY] = key
        self.writer.write_cell(result)
        if result.style == CONTROL_STYLE:  # judges a style whose worker dies (harness.plugin.xdist_hooks)
            matrix_state(self.config).controls[(result.kernel, result.pipeline)] = result
        self.finished += 1
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        if self.progress is not None:
            self.progress.record(result.id, result.outcome)
            return
        evidence = evidence_line(result)
        line = f"[{self.finished}] {result.id} {result.outcome} {result.duration_s:.1f}s"
        terminal.write_line(line + (f"  {evidence[:160]}" if evidence else ""))

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: Any) -> tuple[str, str, str] | None:
        """With --matrix-progress the live count stands for the per-test dots and words, a replaced worker's `R` too."""
        if self.progress is None:
            return None
        if report.outcome != "retired" and (report.when != "call" or
                                            not any(name == RESULT_PROPERTY for name, _ in report.user_properties)):
            return None
        return report.outcome, "", ""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.writer is None or self.results_path is None:
            return
        self.writer.close()
        terminalreporter.section("triton-compat-matrix")
        terminalreporter.write_line(render_summary(read_results(self.results_path)))
        if self.progress is None:  # `harness run` names its files itself
            terminalreporter.write_line(f"results: {self.results_path}")
