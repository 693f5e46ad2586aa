"""`repro` writes a cell as a script that runs without the harness and ends as the cell ended, for every pipeline.

For each pipeline, one cell that passes and one that does not on the CPU tier (a pipeline the CPU tier
cannot ask has its skip cell instead). The harness records every one of those cells, and the controls its failing
ones are judged by (controls_of), in one run of `python -m harness run` (its cells picked with pytest's `-k`) in
worker isolation, the default, where a worker
runs many cells one after another; each cell's script is written from its record as soon as the record is in the
results file and runs in a fresh isolated Python (`-I`, no PYTHONPATH, no TRITON_INTERPRET: the script sets it)
from an empty folder, so nothing of the harness can be imported. The script's last line must be the record's
outcome and error line: this also holds worker isolation to a fresh Python's evidence (before the worker cleared
the interpreter's rewritten kernels between cells, three cells' error lines depended on the cells before them).
The scripts (42 of them, most of their time AOTInductor's C++ builds) run SCRIPTS_AT_ONCE at a time beside the
harness run, each forked from one isolated Python that imported torch, Dynamo and Inductor as the harness's zygote
does, and nothing of the harness (script_starter.py), and
each with caches of its own seeded with the CPU ISA probe's outputs that the harness run's zygote kept
(harness.run.caches.seed_isa_probes): what each script would otherwise pay first, the same on every script
(docs/maintainers.md, "The harness's own tests"). A module only the starter imported, a script must import itself
before it reaches it by attribute, as `python -I repro.py` would need (test_no_script_needs_what_only_the_starter_imported).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from harness_commands import harness_command

from harness.domain.registry import load_specs
from harness.domain.repro import write_repro
from harness.results import CellResult, ResultsFileError, read_results
from harness.run.caches import CACHE_VARIABLES, isa_probes_folder, seed_isa_probes
from harness.vocab import PIPELINES, split_cell_id

REPO = Path(__file__).resolve().parents[2]
STARTER = Path(__file__).resolve().parent / "script_starter.py"
pytestmark = pytest.mark.slow

# pipeline -> (a cell that passes on the CPU tier, one that does not); the outcomes are asserted below.
CELLS: dict[str, tuple[str, str]] = {
    "eager": ("add/wrap_triton/eager", "heuristics_autotune/triton_op/eager"),
    "eager_backward": ("sin/custom_op/eager_backward", "sin/raw/eager_backward"),
    "eager_inputs": ("add/native/eager_inputs", "add/raw/eager_inputs"),
    "compile": ("add/custom_op/compile", "add/triton_op/compile"),
    "compile_fullgraph": ("add/custom_op/compile_fullgraph", "add/autograd_function@module_attribute/compile_fullgraph"),
    "compile_fullgraph_backward": ("sin/custom_op/compile_fullgraph_backward", "sin/triton_op/compile_fullgraph_backward"),
    "compile_dynamic": ("add/custom_op/compile_dynamic", "add/triton_op/compile_dynamic"),
    "cudagraphs": ("", "add/custom_op/cudagraphs"),
    "compile_visible": ("add/native/compile_visible", "add/custom_op/compile_visible"),
    "export_strict": ("add/custom_op/export_strict", "add/raw@module_forward/export_strict"),
    "export_nonstrict": ("add/custom_op/export_nonstrict", "add/raw/export_nonstrict"),
    "export_dynamic": ("add/custom_op/export_dynamic", "add/triton_op/export_dynamic"),
    "export_roundtrip": ("add/custom_op/export_roundtrip", "add/raw/export_roundtrip"),
    "export_roundtrip_bare": ("add/native/export_roundtrip_bare", "add/custom_op/export_roundtrip_bare"),
    "aoti": ("add/custom_op/aoti", "add/raw/aoti"),
    "aoti_strict": ("add/native/aoti_strict", "add/triton_op/aoti_strict"),
    # The passing cell is an in-place kernel's control: judged by what the package wrote in the loader's process
    # (test_an_in_place_native_control_passes_in_a_fresh_process).
    "aoti_fresh_process": ("add_inplace/native/aoti_fresh_process", "add/custom_op/aoti_fresh_process"),
    "flop_counter": ("add/triton_op/flop_counter", "add/wrap_triton/flop_counter"),
    "cpu_fallback": ("", "add/custom_op/cpu_fallback"),
    "tensor_subclass": ("add/custom_op/tensor_subclass", "add/raw/tensor_subclass"),
    "vmap": ("add/triton_op/vmap", "add/raw/vmap"),
    "opcheck": ("add/custom_op/opcheck", "add/triton_op/opcheck"),
}
SKIPPED_ON_CPU = {"cudagraphs", "cpu_fallback"}  # harness.domain.pipelines.requirements.NEEDS_GPU


class ScriptStarter:
    """The client of script_starter.py: `run` blocks until the script forked for it has ended."""

    def __init__(self, folder: Path, environment: dict[str, str]) -> None:
        folder.mkdir(parents=True)
        self.process = subprocess.Popen([sys.executable, "-I", str(STARTER)], cwd=folder, env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lock = threading.Lock()
        self.waiting: dict[str, Future] = {}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            answer = json.loads(line)
            if "returncode" not in answer:
                continue  # the line that says it was forked
            with self.lock:
                self.waiting.pop(answer["id"]).set_result(answer["returncode"])
        with self.lock:  # the starter died: nobody waits forever
            for future in self.waiting.values():
                future.set_exception(RuntimeError(f"the script starter ended with {self.process.poll()}"))

    def run(self, folder: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
        future: Future = Future()
        with self.lock:
            self.waiting[str(folder)] = future
            self.process.stdin.write(json.dumps({"id": str(folder), "folder": str(folder), "env": environment}) + "\n")
            self.process.stdin.flush()
        returncode = future.result(timeout=900)
        read = lambda name: (folder / name).read_text(errors="replace")  # noqa: E731
        return subprocess.CompletedProcess(["python", "-I", str(folder / "repro.py")], returncode, read("stdout.txt"),
                                           read("stderr.txt"))

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def _script_environment(folder: Path) -> dict[str, str]:
    """This process's environment without PYTHONPATH and TRITON_INTERPRET (the script sets it), with caches of the
    folder's own: scripts run three at a time, and two that build the same graph's AOTInductor package in one
    folder can leave one of them an empty JSON file (docs/maintainers.md, "Order independence")."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_INTERPRET")}
    environment.update({variable: str(folder / f"{name}-cache") for variable, name in CACHE_VARIABLES})
    return environment


def _run_script(text: str, folder: Path, starter: ScriptStarter) -> subprocess.CompletedProcess:
    """The script in a folder of its own, its Inductor cache seeded as the harness seeds a zygote's: with the ISA
    probe's outputs kept by the runs before (nothing a cell compiled; none kept yet: the script probes)."""
    _write(folder, text)
    seed_isa_probes(isa_probes_folder(torch.__version__), folder / "inductor-cache")
    return starter.run(folder, _script_environment(folder))


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text(text)
    return folder


SCRIPTS_AT_ONCE = 3  # the scripts mostly wait on the C++ compiler: 3 beside the run's worker


def _keyword(cell: str) -> str:
    """A pytest `-k` term that matches this cell's item alone (`test_cell[kernel/style/pipeline]`); a call site's
    `@` is no `-k` character, so a call-site cell is matched by the two halves of its id."""
    if "@" in cell:
        head, tail = cell.split("@")
        return f"([{head} and {tail}])"
    return f"[{cell}]"


def controls_of(cells: list[str]) -> list[str]:
    """The `native` controls that the failing cells of CELLS are judged by, where CELLS does not ask them itself.

    A failing style's control runs anyway: left out of the selection, in a child of the zygote of its own; asked,
    in the worker before the styles of its group, where the AOTInductor pipelines' `add/native` cells load the one
    package `add/native/aoti` built (harness.domain.pipelines.artifacts) instead of building it three times, once in
    the worker and twice in forked children. The verdicts are the same either way; the run is shorter."""
    controls = []
    for pipeline, (_, failing) in CELLS.items():
        kernel, style, _ = split_cell_id(failing)
        control = f"{kernel}/native/{pipeline}"
        if pipeline not in SKIPPED_ON_CPU and style != "native" and control not in cells and control not in controls:
            controls.append(control)
    return controls


def _harness_run(cells: list[str], output: Path, log: Path) -> subprocess.Popen:
    """One `python -m harness run` over exactly these cells: the kernels x styles x pipelines they span, narrowed to
    them by pytest's `-k`. One worker: two took 8 to 12 CPU seconds more for the same cells (79 and 83 against 71), each
    importing and compiling for itself, while the suite's other worker keeps the second core busy."""
    parts = [split_cell_id(cell) for cell in cells]
    names = [",".join(sorted({part[axis] for part in parts})) for axis in range(3)]
    command = [sys.executable, "-m", "harness", "run", "--tier", "cpu", "-k", names[0], "-s", names[1], "-p", names[2],
               "-n", "1", "--isolation", "worker", "--timeout", "600", "--confirm", "0", "-o", str(output),
               "--", "-k", " or ".join(map(_keyword, cells))]
    with open(log, "w") as handle:  # a file, not a pipe: nobody reads a pipe while the run goes on
        return subprocess.Popen(command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)


def _recorded(output: Path) -> dict[str, CellResult]:
    try:
        return {cell.id: cell for cell in read_results(output).cells}
    except (OSError, ResultsFileError):  # not written yet
        return {}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The run's results file (harness.jsonl) and log, and a folder per script."""
    return tmp_path_factory.mktemp("repro")


@pytest.fixture(scope="module")
def ran(folder):
    """cell id -> (the harness's CellResult, the script's completed process); each script starts once its cell's
    record is in the results file."""
    specs = load_specs()
    wanted = [cell for pair in CELLS.values() for cell in pair if cell]
    output = folder / "harness.jsonl"

    def script_for(cell: str, result: CellResult) -> subprocess.CompletedProcess:
        kernel, style, pipeline = split_cell_id(cell)
        text = write_repro(specs[kernel], style, pipeline, "cpu", expected=result.to_record())
        where = folder / cell.replace("/", "__").replace("@", "-at-")
        script = _run_script(text, where, starter)
        # The script is the kernel's module: where the harness names the module (kernels.add), it names itself.
        script.stderr = script.stderr.replace(str((where / "repro.py").resolve()), specs[kernel].source)
        return script

    run = _harness_run(wanted + controls_of(wanted), output, folder / "harness.log")
    try:
        starter = ScriptStarter(folder / "starter", _script_environment(folder / "starter"))
    except BaseException:  # the run is not left behind
        run.kill()
        run.wait()
        raise
    results: dict[str, CellResult] = {}
    scripts: dict[str, Future] = {}
    with ThreadPoolExecutor(max_workers=SCRIPTS_AT_ONCE) as pool:
        try:
            while True:
                finished = run.poll() is not None
                for cell_id, result in _recorded(output).items():
                    if cell_id in wanted and cell_id not in scripts:
                        results[cell_id] = result
                        scripts[cell_id] = pool.submit(script_for, cell_id, result)
                if finished:
                    break
                time.sleep(1)
        finally:
            if run.poll() is None:
                run.kill()
            run.wait()
            pool.shutdown(wait=True)
            starter.close()
        missing = [cell for cell in wanted if cell not in results]
        log = (folder / "harness.log").read_text(errors="replace")
        assert not missing, f"the harness run recorded no {missing}:\n{log[-3000:]}"
        done = {cell: (results[cell], scripts[cell].result()) for cell in wanted}
    if os.environ.get("TCM_REPRO_SUMMARY"):  # the measured table of docs/advise-and-repro.md
        rows = [f"| `{cell}` | {result.outcome} | {_last_line(script)} |" for cell, (result, script) in done.items()]
        Path(os.environ["TCM_REPRO_SUMMARY"]).write_text("\n".join(rows) + "\n")
    return done


def _last_line(script: subprocess.CompletedProcess) -> str:
    lines = (script.stdout if script.returncode == 0 else script.stderr).strip().splitlines()
    return lines[-1].replace("|", "\\|")[:200] if lines else ""


def test_every_pipeline_has_its_cells():
    assert tuple(CELLS) == PIPELINES


@pytest.mark.parametrize("cell", [cell for pair in CELLS.values() for cell in pair if cell])
def test_the_script_ends_as_the_cell_ended(cell, ran):
    result, script = ran[cell]
    output = script.stdout + script.stderr
    assert "No module named 'harness'" not in output
    if result.outcome in ("pass", "skip"):
        assert script.returncode == 0, output[-3000:]
        word = "PASS" if result.outcome == "pass" else "SKIP"
        assert f"{word}: {cell}" in script.stdout, output[-3000:]
        if result.outcome == "skip":
            assert result.reason in script.stdout
        return
    assert script.returncode == 1, output[-3000:]
    last_line = script.stderr.strip().splitlines()[-1]
    assert last_line == f"{result.outcome.upper()}: {cell} at stage {result.stage}: {result.error_type}: {result.error}"


@pytest.mark.parametrize("pipeline", list(CELLS))
def test_the_chosen_cells_pass_and_do_not_pass(pipeline, ran):
    """Guards the test above: it compares a pass with a pass and a failure with a failure, never two passes."""
    passing, other = CELLS[pipeline]
    if pipeline in SKIPPED_ON_CPU:
        assert ran[other][0].outcome == "skip"
        return
    assert ran[passing][0].outcome == "pass", ran[passing][0].error
    assert ran[other][0].outcome in ("fail", "wrong"), ran[other][0]


def test_the_controls_are_asked_and_the_aoti_ones_load_one_package(ran, folder):
    """What the failing cells were judged by ran in the worker (so it is in the results file), and the AOTInductor
    pipelines' controls loaded the package `aoti`'s built: the reason they are asked (controls_of)."""
    recorded = _recorded(folder / "harness.jsonl")
    assert set(controls_of(list(ran))) <= set(recorded)
    assert {p: recorded[f"add/native/{p}"].detail.get("reused") for p in ("aoti_strict", "aoti_fresh_process")} == {
        "aoti_strict": {"aoti-package": "add/native/aoti"}, "aoti_fresh_process": {"aoti-package": "add/native/aoti"}}


def test_an_in_place_native_control_passes_in_a_fresh_process(ran):
    """aoti_fresh_process judges an in-place kernel by what the package wrote, in the loader's process. Before the
    loader sent its arguments back, the native control of every in-place kernel was `wrong` there (the parent's
    inputs never changed), and every style was blamed on the environment."""
    result, _ = ran["add_inplace/native/aoti_fresh_process"]
    assert result.outcome == "pass", result


# What `torch.__getattr__` imports on first use (torch's `_lazy_modules`): a script may reach these by attribute alone.
TORCH_LAZY_MODULES = frozenset({"torch._dynamo", "torch._inductor", "torch._export", "torch.onnx"})


def _imported(tree: ast.AST) -> set[str]:
    """Every module an import statement of `tree` imports, its parent packages included."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return {".".join(name.split(".")[:end]) for name in names for end in range(1, name.count(".") + 2)}


def _torch_attribute_chains(tree: ast.AST) -> list[list[str]]:
    """`torch._inductor.package.load_package` as ["torch", "_inductor", "package", "load_package"], for each one."""
    chains = []
    for node in ast.walk(tree):
        chain: list[str] = []
        value = node
        while isinstance(value, ast.Attribute):
            chain.insert(0, value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id == "torch" and chain:
            chains.append(["torch", *chain])
    return chains


def reached_without_import(source: str, warm_only: set[str]) -> list[str]:
    """Modules of `warm_only` that `source` reaches by attribute (`torch._inductor.package.load_package`) without
    importing them anywhere: in a forked script they are there, in `python -I repro.py` they may not be."""
    tree = ast.parse(source)
    imported = _imported(tree)
    reached = set()
    for chain in _torch_attribute_chains(tree):
        prefixes = (".".join(chain[:end]) for end in range(len(chain), 1, -1))
        module = next((prefix for prefix in prefixes if prefix in warm_only), None)  # the longest
        if module is not None and module not in TORCH_LAZY_MODULES and module not in imported:
            reached.add(module)
    return sorted(reached)


def test_the_import_check_finds_a_module_reached_without_its_import():
    warm_only = {"torch._dynamo", "torch._dynamo.utils", "torch._inductor", "torch._inductor.package"}
    source = ("import torch\nfrom torch._dynamo.utils import counters\ntorch._dynamo.reset()\n"
              "torch._dynamo.utils.counters.clear()\ntorch._inductor.package.load_package('p')\n")
    assert reached_without_import(source, warm_only) == ["torch._inductor.package"]


def test_no_script_needs_what_only_the_starter_imported(ran):
    """The scripts run forked from script_starter.py, which imported Dynamo and Inductor; a user runs
    `python -I repro.py`, which imported nothing. Each module a script reaches by attribute and only the starter
    imported, the script imports itself (torch's lazy modules import on first use)."""
    scripts = {cell: Path(script.args[-1]) for cell, (_, script) in ran.items()}
    starter = next(iter(scripts.values())).parent.parent / "starter"
    warm_only = set(json.loads((starter / "warm_only.json").read_text()))
    assert "torch._inductor.compile_fx" in warm_only
    reached = {cell: found for cell, path in scripts.items() if (found := reached_without_import(path.read_text(), warm_only))}
    assert reached == {}


def test_the_header_names_the_cell_versions_and_recorded_outcome(ran):
    result, _ = ran["add/raw/export_nonstrict"]
    text = write_repro(load_specs()["add"], "raw", "export_nonstrict", "cpu", expected=result.to_record())
    header = text.split("from __future__")[0]
    assert "add/raw/export_nonstrict" in header and "torch " in header and "triton " in header
    assert "Recorded outcome: fail at stage trace: RuntimeError: Cannot access data pointer" in header
    assert "import harness" not in text and "from harness" not in text


def test_eager_inputs_writes_the_recorded_failing_example_in(ran):
    result, _ = ran["add/raw/eager_inputs"]
    example = result.detail["example"]
    text = write_repro(load_specs()["add"], "raw", "eager_inputs", "cpu", expected=result.to_record())
    dtype = f"torch.{example['dtype']}"
    assert f"InputCase(size={example['size']}, dtype={dtype}, contiguous={example['contiguous']})" in text


@pytest.mark.parametrize("cell_id, message", [
    ("add/raw/no_such_pipeline", "unknown pipeline 'no_such_pipeline'"),
    ("add/no_such_style/eager", "unknown style 'no_such_style'"),
    ("nope/raw/eager", "unknown kernel 'nope'"),
    ("add/raw", "a cell id is kernel/style/pipeline"),
])
def test_what_repro_cannot_write_is_one_line_and_exit_2(cell_id, message):
    completed = harness_command(["repro", cell_id, "--tier", "cpu"], timeout=300)
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and message in completed.stderr


def test_the_command_writes_a_call_site_cell(tmp_path):
    script = tmp_path / "repro.py"
    completed = harness_command(["repro", "add/raw@module_forward/aoti", "--tier", "cpu", "-o", str(script)], timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "'raw@module_forward', 'aoti'" in script.read_text()
