"""A plug-in may set up a runtime at import: the verdicts of its kernels never depend on it.

No process that imported a plug-in (or touched CUDA) is forked to run a cell, in either isolation mode. Each test
runs the built-in `add` and the same kernel from a plug-in that breaks in a forked child, and asks for the same
outcome, stage and error type cell by cell (docs/writing-kernel-specs.md, "What a plug-in may do at import").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.results import read_results
from harness.run.environment import resolve_tier

REPO = Path(__file__).resolve().parents[2]
PLUGINS = Path(__file__).parent / "plugins"
TIER = resolve_tier("auto")
PIPELINES = "eager,compile_fullgraph,export_nonstrict,opcheck" if TIER == "cpu" else "eager,compile_fullgraph,export_strict,aoti"
# In process isolation every cell is a new Python that imports the plug-in itself, whatever the pipeline and whichever
# style launches: one pipeline and one launching style beside the control ask that mechanism (every style in four
# pipelines cost 48 new Pythons, 321 s of the suite on two cores; every style in one, 12 new Pythons, 72 CPU seconds);
# worker isolation, where a cell runs in a long-lived worker, is asked in every style and pipeline above.
PIPELINES_BY_ISOLATION = {"worker": PIPELINES, "process": "eager"}
STYLES_BY_ISOLATION = {"worker": [], "process": ["-s", "native,raw"]}  # worker: the default, every style


def verdicts(tmp_path: Path, plugin: str, kernel: str, isolation: str) -> dict[tuple[str, str], tuple]:
    output = tmp_path / f"{kernel}-{isolation}.jsonl"
    command = ["run", "--kernels-from", str(PLUGINS / plugin), "-k", f"add,{kernel}",
               "-p", PIPELINES_BY_ISOLATION[isolation], *STYLES_BY_ISOLATION[isolation], "-n", "2", "--isolation", isolation,
               "-o", str(output)]
    completed = harness_command(command, timeout=1200)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    by_kernel: dict[str, dict] = {"add": {}, kernel: {}}
    for cell in read_results(output).cells:
        by_kernel[cell.kernel][(cell.style, cell.pipeline)] = (cell.outcome, cell.stage, cell.error_type)
    assert by_kernel["add"], "no cell of add ran"
    return {key: (by_kernel["add"][key], by_kernel[kernel].get(key)) for key in by_kernel["add"]}


@pytest.mark.slow
@pytest.mark.skipif(TIER != "cpu", reason="the pid-bound plug-in is the CPU tier's probe; the GPU has cuda_init_kernels")
@pytest.mark.parametrize("isolation", ["worker", "process"])
def test_a_plugin_bound_to_its_importing_process_gets_the_verdicts_of_add(tmp_path, isolation):
    pairs = verdicts(tmp_path, "pid_bound_kernels.py", "pid_bound_add", isolation)
    differing = {key: pair for key, pair in pairs.items() if pair[0] != pair[1]}
    assert differing == {}


@pytest.mark.slow
@pytest.mark.skipif(TIER != "gpu", reason="initialising CUDA at import is only a hazard on the GPU")
def test_a_plugin_that_initialises_cuda_at_import_gets_the_verdicts_of_add(tmp_path):
    pairs = verdicts(tmp_path, "cuda_init_kernels.py", "cuda_init_add", "worker")
    differing = {key: pair for key, pair in pairs.items() if pair[0] != pair[1]}
    assert differing == {}
