"""Evidence kept out of the chart: full tracebacks behind `report --tracebacks`, tolerance overrides in their table."""

from __future__ import annotations

import json

from report_helpers import cell

from harness.report.__main__ import main
from harness.results import read_results

TRACEBACK = "Traceback (most recent call last):\n  File \"k.py\", line 3, in launch\nKeyError: 'weight'\n"


def test_tracebacks_only_with_the_flag_and_never_in_the_chart(make_results, capsys) -> None:
    run = make_results("r.jsonl", [cell("k", "raw", "eager", "fail", traceback=TRACEBACK), cell("k", "native", "eager")])
    assert main(["report", str(run)]) == 0
    plain = capsys.readouterr().out
    assert "KeyError: 'weight'" not in plain and "## Tracebacks" not in plain
    assert main(["report", str(run), "--tracebacks"]) == 0
    flagged = capsys.readouterr().out
    assert flagged.startswith(plain.rstrip("\n"))
    assert "### k/raw/eager (fail, run)" in flagged and "KeyError: 'weight'" in flagged
    assert "k/native/eager" not in flagged.split("## Tracebacks")[1]


def test_an_older_results_file_without_tracebacks_still_reads(make_results, capsys) -> None:
    run = make_results("old.jsonl", [cell("k", "raw", "eager", "fail")])
    lines = [json.loads(line) for line in run.read_text().splitlines()]
    for record in lines:
        record.pop("traceback", None)
    run.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert read_results(run).cells[0].traceback is None
    assert main(["report", str(run), "--tracebacks"]) == 0
    assert "No traceback recorded" in capsys.readouterr().out


def test_overrides_get_their_own_table(make_results, capsys) -> None:
    rule = "fp64 answer; max(override for fp32, gradients rtol=0 atol=0.01: atomic adds, 4 x fp32 reference error 1e-06)"
    run = make_results("r.jsonl", [cell("k", "custom_op", "eager_backward", detail={"tolerance": {"gradients[1]": rule}}),
                                   cell("k", "raw", "eager", detail={"tolerance": {"output": "fp64 answer; max(...)"}})])
    assert main(["report", str(run)]) == 0
    text = capsys.readouterr().out
    table = text.split("## Tolerance overrides")[1]
    assert "k/custom\\_op/eager\\_backward" in table and "atomic adds" in table and "k/raw/eager" not in table


def test_a_traceback_cannot_close_its_code_block(make_results, capsys) -> None:
    hostile = "Traceback\nRuntimeError: ````\n</details> | table |\n"
    run = make_results("r.jsonl", [cell("k", "raw", "eager", "fail", traceback=hostile)])
    assert main(["report", str(run), "--tracebacks"]) == 0
    section = capsys.readouterr().out.split("## Tracebacks")[1]
    assert "`````text\nTraceback\nRuntimeError: ````\n</details> | table |\n`````" in section
