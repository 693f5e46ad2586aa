"""`tutorial`: the PyTorch tutorial's chart against the measurement, and rewritten in its own source."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from harness_commands import harness_command
from report_helpers import cell, results

from harness.report.markdown.aggregate import Verdict
from harness.report.upstream.tutorial_chart import (
    ALL_CASES,
    MAJORITY,
    NO,
    YES,
    TutorialChartError,
    compare,
    load_chart,
    tutorial_word,
)
from harness.report.upstream.tutorial_rst import RST_LABELS, render_list_table, rewrite_source
from harness.results import read_results

REPO = Path(__file__).resolve().parents[3]
PUBLISHED = REPO / "reports" / "gpu-results.jsonl"
# An excerpt of the tutorial's source around its chart, as published (tests/fixtures/tutorial/README.md).
EXCERPT = REPO / "tests" / "fixtures" / "tutorial" / "chart-excerpt.py.txt"


@cache
def claims():
    return {(claim.row, claim.style): claim for claim in compare(read_results(PUBLISHED), load_chart())}


def test_custom_op_aotinductor_the_tutorial_says_no_the_measurement_the_majority():
    claim = claims()[("Supports AOTInductor", "custom_op")]
    assert (claim.tutorial, claim.measured, claim.verdict.passed, claim.verdict.asked) == (NO, MAJORITY, 74, 76)
    assert claim.contradicted


def test_raw_aotinductor_the_tutorial_says_yes_the_measurement_no_with_nonstrict_export_failing_every_kernel():
    claim = claims()[("Supports AOTInductor", "raw")]
    assert (claim.tutorial, claim.verdict.passed, claim.verdict.asked) == (YES, 36, 76) and claim.contradicted
    assert dict((p, (v.passed, v.asked)) for p, v in claim.by_pipeline) == {"aoti": (0, 38), "aoti_strict": (36, 38)}
    count, cause, _ = claim.causes[0]
    assert count == 38 and cause.startswith("aoti: fail at trace: RuntimeError: Cannot access data pointer")


@pytest.mark.parametrize("passed, asked, said, word", [
    (5, 5, "Yes", YES), (5, 5, "In all cases", ALL_CASES), (5, 5, "No", YES), (3, 5, "Yes", MAJORITY),
    (2, 4, "Yes", NO), (1, 5, "Yes", NO), (0, 5, "Yes", NO), (0, 0, "Yes", None),
])
def test_counts_become_the_tutorials_words(passed, asked, said, word):
    assert tutorial_word(Verdict(passed, asked, ()), said) == word


def _excerpt_table() -> dict[str, list[str]]:
    """The excerpt's list-table: stub -> items, header row included (stub "")."""
    rows: dict[str, list[str]] = {}
    current = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        if line.startswith("#    * -"):
            current = line.removeprefix("#    * -").strip()
            rows[current] = []
        elif line.startswith("#      - ") and current is not None:
            rows[current].append(line.removeprefix("#      - "))
    return rows


def test_the_projects_copy_of_the_chart_says_what_the_tutorials_source_says():
    table = _excerpt_table()
    chart = load_chart()
    plain = {RST_LABELS.get(label, label): label for label in [*chart.columns, *chart.rows]}
    assert [plain.get(column, column) for column in table.pop("")] == list(chart.columns)
    assert {plain.get(row, row): words for row, words in table.items()} == {r: list(w) for r, w in chart.rows.items()}


def test_the_rst_table_has_the_tutorials_labels_and_a_versions_line():
    text = render_list_table(read_results(PUBLISHED), load_chart())
    first = text.splitlines()[0]
    assert "torch 2.11.0+cu130" in first and "triton 3.6.0" in first and "NVIDIA H200" in first
    table = _excerpt_table()
    for label in [*table.pop(""), *table]:
        assert label in text


def test_rewriting_the_source_changes_only_the_measured_words_and_adds_the_versions_line():
    source = EXCERPT.read_text(encoding="utf-8")
    rewritten = rewrite_source(source, read_results(PUBLISHED))
    before, after = source.splitlines(), rewritten.splitlines()
    assert len(after) == len(before) + 2
    added = [line for line in after if line not in before]
    assert after[after.index("# .. list-table::") - 2].startswith("# The chart below was measured with torch 2.11")
    changed = [b for b, a in zip(before[22:], after[24:]) if a != b]
    assert changed and all(line.startswith("#      - ") for line in changed)
    assert "#      - No" in after[after.index("#    * - Supports AOTInductor") + 1]  # raw, 33/70
    assert added[0].startswith("# The chart below")
    assert rewrite_source(rewritten, read_results(PUBLISHED)) == rewritten  # a second run changes nothing


def test_a_row_or_column_nobody_measured_keeps_the_tutorials_word():
    made = results([cell("k", "custom_op", "eager")])
    rewritten = rewrite_source(EXCERPT.read_text(encoding="utf-8"), made)
    lines = rewritten.splitlines()
    inference = lines.index("#    * - Supports inference")
    assert lines[inference + 1:inference + 4] == ["#      - Yes"] * 3  # raw, triton_op: not measured; custom_op: Yes
    training = lines.index("#    * - Supports training")
    assert lines[training + 1] == "#      - In the majority of cases"


def test_a_source_without_a_list_table_is_refused():
    with pytest.raises(TutorialChartError, match="no `# .. list-table::`"):
        rewrite_source("# just a comment\nx = 1\n", results([]), "t.py")


def test_the_command_never_overwrites_the_tutorial_and_says_why_in_one_line(tmp_path):
    copy = tmp_path / "tutorial.py"
    copy.write_text(EXCERPT.read_text(encoding="utf-8"), encoding="utf-8")
    completed = harness_command(["tutorial", "--rst", str(copy), "-o", str(copy)], timeout=120)
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1 and "would overwrite" in completed.stderr
    assert copy.read_text(encoding="utf-8") == EXCERPT.read_text(encoding="utf-8")


def test_a_bad_chart_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "chart.json"
    bad.write_text(json.dumps({"columns": []}))
    completed = harness_command(["tutorial", "--chart", str(bad)], timeout=120)
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1 and str(bad) in completed.stderr
