"""The suite's zygotes and process-isolation cells are forked by a maker (tests/zygote_maker.py) only where a new
Python would be the same, and a run gives the same results either way."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from harness_commands import harness_command
from zygote_maker import CELL_MODULE, ZYGOTE_MODULE, refusal, thread_count

from harness.results import read_results
from harness.run.startup.command_lines import CELL_PYTHON_VARIABLE, ZYGOTE_PYTHON_VARIABLE

LINEAGE = Path(__file__).resolve().parents[1] / "integration" / "plugins" / "zygote_lineage_kernels.py"
OWN = {"PATH": "/usr/bin", "OMP_NUM_THREADS": "2", "TMPDIR": "/tmp/a", "TCM_RUN_CACHES": "/tmp/r1",
       "PYTHONDONTWRITEBYTECODE": "1"}


def _request(env: dict[str, str], tier: str = "cpu", module: str = ZYGOTE_MODULE) -> dict:
    return {"env": env, "cwd": "/", "python_args": ["-m", module, "/tmp/dir", "123", tier]}


def _cell_request(tmp_path: Path, env: dict[str, str], tier: str = "cpu") -> dict:
    """A cell's process in process isolation: its tier is in the request.json of its folder (harness.run.isolation)."""
    (tmp_path / "cell").mkdir(parents=True)
    (tmp_path / "cell" / "request.json").write_text(json.dumps({"kernel": "add", "tier": tier}))
    return {"env": env, "cwd": str(tmp_path), "python_args": ["-m", CELL_MODULE, "cell"]}


def test_a_zygote_is_forked_where_only_variables_read_later_differ():
    later = {**OWN, "TMPDIR": "/tmp/b", "TCM_RUN_CACHES": "/tmp/r2", "TORCHINDUCTOR_CACHE_DIR": "/tmp/c",
             "PYTEST_VERSION": "9", "PYTHONPYCACHEPREFIX": "/tmp/p"}
    del later["PYTHONDONTWRITEBYTECODE"]  # the bytecode variables are set in the forked zygote's `sys`
    assert refusal(_request(later), OWN, None) is None
    assert refusal(_request(later), OWN, "cpu") is None


def test_a_zygote_asked_with_another_thread_count_is_forked_to_set_it():
    """A run with several workers gives each of its processes a share of the cores in OMP_NUM_THREADS, which torch
    reads when it is imported: the forked process sets it (torch.set_num_threads) as a new Python would read it."""
    fewer = _request({**OWN, "OMP_NUM_THREADS": "1"})
    assert refusal(fewer, OWN, None) is None and thread_count(fewer, OWN) == 1
    assert thread_count(_request(OWN), OWN) is None
    assert thread_count(fewer, {k: v for k, v in OWN.items() if k != "OMP_NUM_THREADS"}) == 1


@pytest.mark.parametrize("request_, warmed_for, why", [
    (_request({k: v for k, v in OWN.items() if k != "OMP_NUM_THREADS"}), None,
     "the environment differs in OMP_NUM_THREADS (None), which torch.set_num_threads cannot give"),
    (_request({**OWN, "OMP_NUM_THREADS": "0"}), None, "the environment differs in OMP_NUM_THREADS ('0')"),
    (_request({k: v for k, v in OWN.items() if k != "PATH"}), None, "the environment differs in PATH"),
    (_request(OWN, tier="gpu"), "cpu", "warmed up for the cpu tier, asked for gpu"),
    (_request(OWN, module="harness.cli"), None,
     "not `-m harness.run.startup.loader_zygote DIR OWNER TIER` nor `-m harness.run.isolation.cell_worker WORKDIR`"),
])
def test_a_zygote_is_refused_where_a_new_python_would_differ(request_, warmed_for, why):
    assert why in refusal(request_, OWN, warmed_for)


def test_a_cell_is_forked_or_refused_by_the_tier_its_request_names(tmp_path):
    later = {**OWN, "TMPDIR": "/tmp/b", "TRITON_INTERPRET": "1", "PYTEST_XDIST_WORKER": "gw0"}
    assert refusal(_cell_request(tmp_path / "a", later), OWN, "cpu") is None
    assert refusal(_cell_request(tmp_path / "b", OWN, tier="gpu"), OWN, "cpu") == "warmed up for the cpu tier, asked for gpu"
    assert refusal(_cell_request(tmp_path / "c", {**OWN, "OMP_NUM_THREADS": "1"}), OWN, None) is None
    assert "differs in OMP_NUM_THREADS" in refusal(_cell_request(tmp_path / "d", {**OWN, "OMP_NUM_THREADS": "x"}), OWN, None)
    missing = {"env": OWN, "cwd": str(tmp_path), "python_args": ["-m", CELL_MODULE, "nowhere"]}
    assert "nor `-m harness.run.isolation.cell_worker WORKDIR` (its request.json read)" in refusal(missing, OWN, None)


# What the lineage plug-in's failing cell says in each way a run's processes start, per isolation.
STARTED = {("worker", "forked"): "in a process the suite's zygote maker forked",
           ("worker", "new"): "in a Python the harness started: -m harness.run.startup.loader_zygote",
           ("process", "forked"): "in a process the suite's zygote maker forked",
           ("process", "new"): "in a Python the harness started: -m harness.run.isolation.cell_worker"}


@pytest.mark.slow
@pytest.mark.parametrize("isolation, pipelines", [("worker", "eager,aoti_fresh_process"), ("process", "eager")])
def test_a_forked_process_gives_the_results_of_a_new_python(tmp_path, isolation, pipelines):
    """The same run twice: its zygote and its process-isolation cells forked by the maker (harness_command's default),
    then started as new Pythons (TCM_ZYGOTE_PYTHON and TCM_CELL_PYTHON naming this Python). The lineage plug-in's line
    tells which one ran its cells; every other cell, `aoti_fresh_process`'s loaders among them (a loader reports any
    kernel module imported), is the same: outcome, stage and error line, and the intra-op threads its process had
    (two workers: the run gives each process its share of the cores in OMP_NUM_THREADS, which the maker's processes
    set after the fork)."""
    lines = {}
    for how, python in (("forked", None), ("new", sys.executable)):
        env = dict(os.environ) if python is None else {**os.environ, ZYGOTE_PYTHON_VARIABLE: python,
                                                       CELL_PYTHON_VARIABLE: python}
        output = tmp_path / f"{how}.jsonl"
        # The lineage kernel's own aoti_fresh_process cells are left out (pytest's -k): `add`'s ask the loaders. Its
        # native cell built a package in each run: the two tests took 67.5 CPU seconds alone with them, 53.6 without.
        completed = harness_command(["run", "--tier", "cpu", "--kernels-from", str(LINEAGE), "-k", "zygote_lineage,add",
                                     "-s", "native,custom_op", "-p", pipelines, "-n", "2", "--isolation", isolation,
                                     "-o", str(output), "--", "-k", "not (zygote_lineage and aoti_fresh_process)"],
                                    env=env, timeout=600)
        assert completed.returncode in (0, 1), completed.stdout[-3000:] + completed.stderr[-3000:]
        lines[how] = {cell.id: (cell.outcome, cell.stage, cell.error, cell.detail.get("cpu_threads"))
                      for cell in read_results(output).cells}
    where = {how: lines[how]["zygote_lineage/custom_op/eager"][2].rsplit("; ", 1) for how in lines}
    for how in lines:
        assert where[how][0].endswith(STARTED[isolation, how])
    assert where["forked"][1] == where["new"][1]  # the cell's own process: its threads as a new Python had them
    lineage = {cell for cell in lines["forked"] if cell.startswith("zygote_lineage/custom_op/")}
    assert {k: v for k, v in lines["forked"].items() if k not in lineage} == \
           {k: v for k, v in lines["new"].items() if k not in lineage}
    if isolation == "worker":
        assert lines["forked"]["add/native/aoti_fresh_process"][0] == "pass"  # a loader forked from a forked zygote
