"""Results files: flushed line by line, read back whole, and refused with one clear line when broken."""

import json

import pytest

from harness.results import (
    SCHEMA_VERSION,
    CellResult,
    ResultsFileError,
    ResultsWriter,
    header_record,
    read_results,
    unknown_names,
)


def cell(id_="add/raw/eager", outcome="pass", **fields):
    kernel, style, pipeline = id_.split("/")
    return CellResult(id=id_, kernel=kernel, style=style, pipeline=pipeline, outcome=outcome, **fields)


def write(path, cells):
    writer = ResultsWriter(path, header_record({"tier": "cpu", "torch": "2.13.0"}, "2026-11-22T00:00:00+00:00", ["test"]))
    for c in cells:
        writer.write_cell(c)
    writer.close()


def test_round_trip_keeps_every_field(tmp_path):
    path = tmp_path / "r.jsonl"
    original = cell(outcome="fail", stage="trace", error_type="Unsupported", error="boom", detail={"x": 1})
    write(path, [original, cell("add/native/eager")])
    results = read_results(path)
    assert results.header["schema"] == SCHEMA_VERSION
    assert results.header["environment"]["tier"] == "cpu"
    assert results.cells[0] == original
    assert [c.id for c in results.cells] == ["add/raw/eager", "add/native/eager"]


def test_each_cell_is_on_disk_as_soon_as_it_is_written(tmp_path):
    path = tmp_path / "r.jsonl"
    writer = ResultsWriter(path, header_record({}, "t", []))
    writer.write_cell(cell())
    assert len(path.read_text().splitlines()) == 2  # before close: flushed
    writer.close()


def test_a_torn_last_line_is_dropped_not_fatal(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, [cell()])
    with open(path, "a") as f:
        f.write('{"record": "cell", "id": "add/raw/comp')
    results = read_results(path)
    assert results.dropped_torn_line and len(results.cells) == 1


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "empty results file"),
        ("not json\n", "not a results file (line 1 is not JSON"),
        (json.dumps({"record": "header", "schema": SCHEMA_VERSION}) + "\nnot json\n" + json.dumps({"record": "cell"}) + "\n",
         "2: not a JSON line"),
        (json.dumps({"record": "header", "schema": SCHEMA_VERSION, "environment": []}) + "\n", "'environment' must be an object"),
        ('{"record": "cell"}\n', "first line is not a results header"),
        (json.dumps({"record": "header", "schema": 99}) + "\n", "schema version 99 is unknown"),
        (json.dumps({"record": "header", "schema": SCHEMA_VERSION}) + '\n{"record": "other"}\n', "unknown record kind"),
        (json.dumps({"record": "header", "schema": SCHEMA_VERSION}) + '\n{"record": "cell", "id": "x"}\n', "malformed cell"),
    ],
)
def test_broken_files_get_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(ResultsFileError) as error:
        read_results(path)
    assert message in str(error.value) and str(path) in str(error.value)
    assert "\n" not in str(error.value)


def test_a_last_line_torn_inside_a_utf8_character_is_dropped(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, [cell()])
    with open(path, "ab") as f:
        f.write('{"record": "cell", "error": "…'.encode()[:-1])  # the kill cut a multi-byte character in half
    assert read_results(path).dropped_torn_line


def test_the_same_verdict_twice_is_one_cell_two_verdicts_are_refused(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, [cell(duration_s=1.0), cell("add/native/eager"), cell(duration_s=2.0, worker="gw1")])
    results = read_results(path)
    assert [(c.id, c.duration_s) for c in results.cells] == [("add/raw/eager", 2.0), ("add/native/eager", 0.0)]
    write(path, [cell(), cell("add/native/eager"), cell(outcome="flaky", repeats=["pass", "fail"])])
    with pytest.raises(ResultsFileError, match=r"r.jsonl:4: cell add/raw/eager is recorded twice .*line 2: pass, line 4: flaky"):
        read_results(path)


@pytest.mark.parametrize("field, value, message", [
    ("outcome", None, "'outcome' must be a non-empty string"),
    ("kernel", "", "'kernel' must be a non-empty string"),
    ("stage", 3, "'stage' must be a string or null"),
    ("duration_s", "fast", "'duration_s' must be a number"),
    ("attempts", True, "'attempts' must be a whole number"),
    ("detail", [], "'detail' must be an object"),
    ("repeats", ["pass", 1], "'repeats' must be a list of outcomes"),
    ("id", "add/raw/compile", "does not match its kernel/style/pipeline"),
])
def test_a_field_of_the_wrong_type_is_refused_with_its_line(tmp_path, field, value, message):
    path = tmp_path / "r.jsonl"
    record = {**cell().to_record(), field: value}
    path.write_text(json.dumps({"record": "header", "schema": SCHEMA_VERSION}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(ResultsFileError, match=f"r.jsonl:2: malformed cell record .*{message}"):
        read_results(path)


def test_names_the_vocabulary_does_not_know_are_read_and_listed(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, [cell("add/pallas/eager", outcome="mystery", stage="deploy"), cell("add/raw/eager_future")])
    assert unknown_names(read_results(path).cells) == {
        "style": ["pallas"], "pipeline": ["eager_future"], "outcome": ["mystery"], "stage": ["deploy"]}
