"""Feature views: the chart of the cells whose kernel carries a Triton feature tag, read from the header."""

from pathlib import Path

from harness_commands import harness_command
from report_helpers import write_results

from harness.report.markdown.features import FeatureError, only_feature, render_feature_table
from harness.results import CellResult, read_results

REPO = Path(__file__).resolve().parents[3]
KERNELS = {"add_autotuned": {"features": ["autotune", "grid-lambda"]}, "softmax": {"features": ["reduction"]}}


def cells():
    return [CellResult(id=f"{k}/raw/eager", kernel=k, style="raw", pipeline="eager", outcome="pass") for k in KERNELS]


def test_only_feature_keeps_the_tagged_kernels(tmp_path):
    results = read_results(write_results(tmp_path / "r.jsonl", cells(), None, kernels=KERNELS))
    assert [c.kernel for c in only_feature(results, "autotune", "r.jsonl").cells] == ["add_autotuned"]
    table = render_feature_table(results)
    assert "autotune" in table and "reduction" in table


def test_unknown_feature_and_untagged_files_are_one_line_errors(tmp_path):
    tagged = read_results(write_results(tmp_path / "t.jsonl", cells(), None, kernels=KERNELS))
    untagged = read_results(write_results(tmp_path / "u.jsonl", cells(), None))
    for results, message in ((tagged, "no kernel is tagged 'tl.dot'; tags in this file: autotune, grid-lambda, reduction"),
                             (untagged, "records no kernel features")):
        try:
            only_feature(results, "tl.dot", "x.jsonl")
        except FeatureError as error:
            assert message in str(error)
        else:
            raise AssertionError("expected FeatureError")


def test_report_feature_on_the_command_line(tmp_path):
    path = write_results(tmp_path / "r.jsonl", cells(), None, kernels=KERNELS)
    ok = harness_command(["report", str(path), "--feature", "reduction"], timeout=120)
    assert ok.returncode == 0 and "softmax" in ok.stdout and "add_autotuned" not in ok.stdout.split("## Detail")[1]
    bad = harness_command(["report", str(path), "--feature", "nope"], timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
