"""export_roundtrip names the sub-stage that failed (export, save, import, load, run, check) in the evidence,
on the harness's stage vocabulary (harness.domain.pipelines.export_roundtrip)."""

import json

import pytest

from harness.domain.pipelines import export_loader
from harness.domain.pipelines.common import StageFailure
from harness.domain.pipelines.export_roundtrip import STAGE_OF, child_failure, roundtrip_stage
from harness.vocab import STAGES


def test_every_sub_stage_maps_onto_a_stage_of_the_vocabulary():
    assert set(STAGE_OF) == {"export", "save", "import", "load", "run", "check"}
    assert set(STAGE_OF.values()) <= set(STAGES)


def test_a_failed_save_is_recorded_at_compile_and_named_save():
    with pytest.raises(StageFailure) as caught:
        with roundtrip_stage("save", None):
            raise TypeError("cannot pickle 'generator' object")
    failure = caught.value
    assert (failure.stage, failure.detail["roundtrip_stage"]) == ("compile", "save")
    assert failure.prefix == "save: " and isinstance(failure.error, TypeError)


def test_a_kernel_module_the_fresh_process_cannot_import_fails_at_load_named_import(tmp_path):
    job = {"program": str(tmp_path / "never-read.pt2"), "inputs": "", "outputs": "", "report": str(tmp_path / "r.json"),
           "consumer_import": {"source": "no_such_kernel_library", "kernel": "add", "style": "custom_op"},
           "operators": ["tcm_custom_op::add.default"]}
    (tmp_path / "job.json").write_text(json.dumps(job))

    assert export_loader.main([str(tmp_path / "job.json")]) == 1
    report = export_loader.read_report(tmp_path / "r.json")
    assert (report["stage"], report["error_type"]) == ("import", "KernelSourceError")

    failure = child_failure(report, returncode=1, output="", source="no_such_kernel_library", imported=True)
    assert (failure.stage, failure.detail["roundtrip_stage"]) == ("load", "import")
    assert type(failure.error).__name__ == "KernelSourceError"  # the fresh process's own exception type
    assert "no_such_kernel_library: no such module or file" in str(failure.error)


def test_a_loader_killed_by_a_signal_says_so_with_its_stage():
    failure = child_failure({"stage": "run", "status": "started"}, returncode=-11, output="", source="kernels.add",
                            imported=True)
    assert (failure.stage, failure.detail["roundtrip_stage"]) == ("run", "run")
    assert "died with signal 11 in stage run" in str(failure.error)
