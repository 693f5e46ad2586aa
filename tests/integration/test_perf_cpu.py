"""`harness perf` on the CPU tier, end to end: two styles timed in eager at tiny sizes, one left untimed.

The matrix results are written here rather than run (the matrix has its own tests): native and raw
passed eager, custom_op failed it. Interpreter times mean nothing; what must hold is the file.
"""

import json
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.perf_results import read_perf_results
from harness.results import CellResult, ResultsWriter, header_record
from harness.run.environment import describe

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def perf(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perf")
    matrix = folder / "results.jsonl"
    writer = ResultsWriter(matrix, header_record(describe("cpu"), "now", ["test"]))
    for style, outcome in (("native", "pass"), ("raw", "pass"), ("custom_op", "fail")):
        writer.write_cell(CellResult(id=f"add/{style}/eager", kernel="add", style=style, pipeline="eager",
                                     outcome=outcome, stage="run" if outcome == "fail" else None,
                                     error_type="RuntimeError" if outcome == "fail" else None,
                                     error="planted by the test" if outcome == "fail" else None))
    writer.close()
    output = folder / "perf.jsonl"
    command = ["perf", "--tier", "cpu", "--results", str(matrix), "-k", "add",
               "-s", "native,raw,custom_op", "-m", "eager", "--sizes", "64,256", "--min-samples", "6",
               "--max-samples", "8", "--max-seconds", "0.5", "--warmup", "1", "-o", str(output)]
    completed = harness_command(command, timeout=300)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return read_perf_results(output), completed


def test_every_style_and_size_has_a_record_with_the_environment_header(perf):
    results, _ = perf
    assert sorted(r.id for r in results.records) == sorted(
        f"add/{style}/eager/{size}" for style in ("native", "raw", "custom_op") for size in (64, 256))
    assert results.environment["tier"] == "cpu" and results.environment["interpreter"] is True
    assert results.header["method"]["rule"]["max_samples"] == 8


def test_passing_cells_are_timed_with_their_spread_and_the_profiler_check(perf):
    results, _ = perf
    for record in (r for r in results.records if r.style in ("native", "raw")):
        assert record.timed, record
        host = record.host
        assert host["ci_low_s"] <= host["median_s"] <= host["ci_high_s"] and 6 <= host["n"] <= 8
        assert host["q1_s"] <= host["q3_s"]
        assert record.device is None  # no device on the CPU tier
        assert record.first_call_s > 0 and record.profiler["ratio_to_wall"] > 0
        assert record.bytes_moved == 3 * 4 * record.size and record.flops == record.size


def test_a_cell_the_matrix_failed_is_not_timed_and_keeps_its_evidence(perf):
    results, completed = perf
    for record in (r for r in results.records if r.style == "custom_op"):
        assert (record.outcome, record.error, record.host, record.first_call_s) == ("fail", "planted by the test",
                                                                                   None, None)
    assert "custom_op" not in completed.stdout  # no worker was started for it
    assert json.loads((Path(results.header["matrix_results"])).read_text().splitlines()[0])["record"] == "header"
