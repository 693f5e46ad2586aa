"""Which perf cells are timed: only those the matrix passed; the rest carry the matrix's outcome and evidence."""

from harness.perf.plan import PerfJob, environment_mismatch, split_jobs
from harness.results import CellResult, ResultsFile


def matrix(*cells: CellResult) -> ResultsFile:
    return ResultsFile(header={"record": "header"}, cells=list(cells))


def cell(style: str, pipeline: str, outcome: str, **evidence) -> CellResult:
    return CellResult(id=f"add/{style}/{pipeline}", kernel="add", style=style, pipeline=pipeline, outcome=outcome,
                      **evidence)


def test_only_jobs_whose_matrix_cell_passed_are_timed():
    jobs = [PerfJob("add", "raw", "eager", (64, 4096)), PerfJob("add", "raw", "compile", (64, 4096))]
    results = matrix(cell("raw", "eager", "pass"),
                     cell("raw", "compile", "fail", stage="trace", error_type="TorchRuntimeError", error="fake tensor"))
    to_time, untimed = split_jobs(jobs, results)
    assert to_time == [jobs[0]]
    assert [(r.mode, r.size, r.outcome, r.stage, r.error_type, r.timed) for r in untimed] == [
        ("compile", 64, "fail", "trace", "TorchRuntimeError", False),
        ("compile", 4096, "fail", "trace", "TorchRuntimeError", False),
    ]


def test_a_mode_reads_its_own_pipeline_and_a_missing_cell_is_a_skip_with_the_reason():
    jobs = [PerfJob("add", "custom_op", "cudagraphs", (64,)), PerfJob("add", "custom_op", "aoti", (64,))]
    results = matrix(cell("custom_op", "cudagraphs", "skip", reason="CUDA graphs need a GPU"),
                     cell("custom_op", "compile", "pass"))
    to_time, untimed = split_jobs(jobs, results)
    assert to_time == []
    assert untimed[0].outcome == "skip" and untimed[0].reason == "CUDA graphs need a GPU"
    assert untimed[1].outcome == "skip" and "no cell add/custom_op/aoti" in untimed[1].reason


def test_matrix_results_from_another_environment_are_named_by_field():
    here = {"tier": "gpu", "torch": "2.11.0", "triton": "3.5.0", "gpu": "NVIDIA H100 80GB HBM3"}
    assert environment_mismatch(dict(here), here) is None
    assert "'torch'" in environment_mismatch(here | {"torch": "2.10.0"}, here)
