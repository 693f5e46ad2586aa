"""Results files: flushed line by line, read back whole, and refused with one clear line when broken."""

import json

import pytest

from harness.results import SCHEMA_VERSION, CellResult, ResultsFileError, ResultsWriter, header_record, read_results


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
        ("not json\n", "not a JSON line"),
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
