"""The worker-isolation fault runs, made once per test session and read by both fault modules.

`test_faults_table.py` (every fault, as one table) and `test_isolation.py` (worker isolation against process
isolation) ask the same mechanism of worker isolation: a fault in a cell ends or dirties its worker, and every
other cell of the run stays as in a clean run. One set of runs answers both (the issue's "one slow end-to-end run
per mechanism"): `python -m harness run` in one worker, on the machine's tier,

- `eager`: the eager faults between witnesses (`add` before them, `after_add` and `after_sin` after), every
  style that launches (`raw`, `custom_op`) beside the `native` control;
- `compile`: the compile fault, then `after_add`, in `native` and `raw`;
- `clean`: the witnesses alone, in both pipelines and every style the faulty runs ask.

pytest-xdist may run the two modules in different workers; a file lock in the session's shared temporary folder
makes each run once, when a test first asks for it, and the tests after it read it. The runs a test asks for run at
the same time: most of a faulty run's time is a hang fault waiting for its run's cell limit, with no CPU behind it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock
from harness_commands import harness_command

from harness.results import CellResult, read_results
from harness.run.environment import resolve_tier

FAULTS_MODULE = Path(__file__).with_name("fault_kernels.py")
REPO = Path(__file__).resolve().parents[3]
TIER = resolve_tier("auto")
WITNESSES = ["add", "after_add", "after_sin"]
PIPELINES = {"eager": "eager", "compile": "compile_fullgraph"}
LAUNCHING_STYLES = {"eager": ["raw", "custom_op"], "compile": ["raw"]}  # per run; `native` is asked beside them
# Per-cell limits, per run: long enough for a witness on a busy machine, short enough to keep CI fast: each hang fault
# waits for its run's limit (the slowest other cells: docs/maintainers.md, "The harness's own tests").
TIMEOUT_S = {"cpu": {"eager": 10, "compile": 30, "clean": 120}, "gpu": {"eager": 30, "compile": 60, "clean": 120}}[TIER]
RUN_NAMES = ("eager", "compile", "clean")


@dataclass(frozen=True)
class Fault:
    kernel: str
    what: str
    run: str  # "eager" or "compile": which run asks it
    cell: str  # style/pipeline of the table's cell; every launching style of its run meets the fault too
    outcome: str
    stage: str
    error_type: str | None  # None: any (it differs between torch versions)
    message: str  # a part of the recorded first line, case-insensitive
    gpu_only: bool = False


FAULTS = [
    Fault("fault_segfault", "a segfault (SIGSEGV) in the launch", "eager", "raw/eager", "crash", "run", "SIGSEGV",
          "died of SIGSEGV"),
    Fault("fault_abort", "os.abort() in the launch", "eager", "raw/eager", "crash", "run", "SIGABRT", "died of SIGABRT"),
    Fault("fault_exit", "a silent os._exit(3)", "eager", "raw/eager", "crash", "run", "ProcessExited", "exited with code 3"),
    Fault("fault_hang", "a Python launch that sleeps forever", "eager", "raw/eager", "timeout", "run", "Timeout",
          "no result after"),
    Fault("fault_compile_hang", "a compile that hangs (Dynamo traces an endless loop)", "compile", "raw/compile_fullgraph",
          "timeout", "compile", "Timeout", "in stage compile"),
    Fault("fault_markdown", "an exception holding Markdown, HTML and 10,000 characters", "eager", "raw/eager", "fail", "run",
          "RuntimeError", "| **bold** | <script>"),
    Fault("fault_dirty", "dirty state: checker tolerances, torch.empty_like, a dynamo config, a new op", "eager", "raw/eager",
          "fail", "run", "RuntimeError", "raised after corrupting"),
    Fault("fault_dirty_torch", "dirty state: default device meta, aten::add overridden, checker patched", "eager", "raw/eager",
          "fail", "run", "RuntimeError", "raised after setting the default device"),
    Fault("fault_gpu_illegal_address", "a CUDA illegal memory access (a Triton store 4 TiB out)", "eager", "raw/eager", "fail",
          "run", None, "illegal memory access", gpu_only=True),
    Fault("fault_gpu_kernel_never_ends", "a Triton kernel that never ends (spins on a flag)", "eager", "raw/eager", "timeout",
          "run", "Timeout", "no result after", gpu_only=True),
    Fault("fault_gpu_out_of_memory", "torch.empty of 10**13 bytes on the GPU", "eager", "raw/eager", "fail", "run",
          "OutOfMemoryError", "out of memory", gpu_only=True),
]
ASKED = [fault for fault in FAULTS if TIER == "gpu" or not fault.gpu_only]


@dataclass(frozen=True)
class FaultRun:
    """What a run asks: its kernels in order (faults between witnesses), styles, pipelines, cell limit, isolation."""
    name: str
    kernels: list[str]
    styles: list[str]
    pipelines: list[str]
    timeout_s: float
    isolation: str = "worker"  # the default: the shared runs; test_isolation.py makes a process-isolation one too


def planned_runs() -> list[FaultRun]:
    eager_faults, compile_faults = ([fault.kernel for fault in ASKED if fault.run == run] for run in ("eager", "compile"))
    eager, compile_ = (["native", *LAUNCHING_STYLES[run]] for run in ("eager", "compile"))
    return [
        FaultRun("eager", ["add", *eager_faults, "after_add", "after_sin"], eager, [PIPELINES["eager"]],
                 TIMEOUT_S["eager"]),
        FaultRun("compile", [*compile_faults, "after_add"], compile_, [PIPELINES["compile"]], TIMEOUT_S["compile"]),
        FaultRun("clean", WITNESSES, eager, list(PIPELINES.values()), TIMEOUT_S["clean"]),
    ]


def run_matrix(folder: Path, run: FaultRun, limit_s: float = 1800) -> None:
    """One `python -m harness run` in one worker, in the run's isolation; it must finish (exit 0)."""
    output = folder / f"{run.name}.jsonl"
    command = ["run", "--kernels-from", str(FAULTS_MODULE), "-k", ",".join(run.kernels),
               "-s", ",".join(run.styles), "-p", ",".join(run.pipelines), "-n", "1", "--isolation", run.isolation,
               "--timeout", str(run.timeout_s), "-o", str(output), "--overwrite"]
    completed = harness_command(command, timeout=limit_s)
    (folder / f"{run.name}.log").write_text(completed.stdout + completed.stderr)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]


def shared_fault_runs(shared_temp: Path, names: tuple[str, ...] = RUN_NAMES) -> Path:
    """The folder holding the runs named (of eager.jsonl, compile.jsonl and clean.jsonl), each made by whichever
    test asks for it first; a test that needs only the clean run does not wait for the faulty ones."""
    folder = shared_temp / "tcm-fault-runs"
    folder.mkdir(exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        missing = [run for run in planned_runs() if run.name in names and not (folder / f"{run.name}.done").exists()]
        run_at_once(folder, missing)
    return folder


def run_at_once(folder: Path, runs: list[FaultRun]) -> None:
    """Each run made and marked done, all at the same time; the first failure is raised once all have ended (the
    runs that finished stay done)."""
    def make(run: FaultRun) -> None:
        run_matrix(folder, run)
        (folder / f"{run.name}.done").write_text("")

    with ThreadPoolExecutor(max_workers=max(len(runs), 1)) as pool:
        futures = [pool.submit(make, run) for run in runs]
    for future in futures:
        future.result()


def cells(folder: Path, name: str) -> dict[str, CellResult]:
    return {cell.id: cell for cell in read_results(folder / f"{name}.jsonl").cells}
