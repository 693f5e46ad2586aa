"""`timings`: each pipeline's cell-seconds and their stages, largest first, from the cells' own records."""

from __future__ import annotations

import re
from pathlib import Path

from report_helpers import cell, environment, results, write_results

from harness.report.__main__ import main
from harness.report.markdown.timings import render_timings


def row(text: str, pipeline: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"| {pipeline} "))
    return [part.strip() for part in line.strip("|").split("|")]


def test_pipelines_are_ordered_by_their_seconds_and_split_by_stage() -> None:
    cells = [
        cell("a", "raw", "eager", duration_s=1.0, detail={"stage_s": {"build": 0.2, "run": 0.7}}),
        cell("a", "raw", "aoti", duration_s=30.0, detail={"stage_s": {"build": 0.1, "trace": 2.0, "compile": 25.0}}),
        cell("b", "raw", "aoti", duration_s=50.0, detail={"stage_s": {"compile": 40.0, "load": 6.0}}),
    ]
    text = render_timings(results(cells, environment(cpu_count=4)), "r.jsonl")
    lines = text.splitlines()
    assert next(i for i, line in enumerate(lines) if line.startswith("| aoti ")) < \
        next(i for i, line in enumerate(lines) if line.startswith("| eager "))
    # pipeline, cells, cell-s, share, median, max, build, trace, compile, load, run, check, outside
    assert row(text, "aoti") == ["aoti", "2", "80", "99%", "40.0", "50.0", "0", "2", "65", "6", "-", "-", "7"]
    assert row(text, "eager") == ["eager", "1", "1", "1%", "1.0", "1.0", "0", "-", "-", "-", "1", "-", "0"]
    assert row(text, "**all**")[:4] == ["**all**", "3", "81", "100%"]
    assert "at least 0.3 min of wall time" in text  # 81 s over 4 cores


def test_a_file_without_stage_times_shows_totals_only(tmp_path: Path, capsys) -> None:
    path = write_results(tmp_path / "old.jsonl", [cell("a", "raw", "compile", duration_s=12.0)])
    assert main(["timings", str(path)]) == 0
    assert row(capsys.readouterr().out, "compile") == ["compile", "1", "12", "100%", "12.0", "12.0"] + ["-"] * 7


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["timings", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cells_with_start_times_get_a_timeline_of_how_busy_the_workers_were() -> None:
    t0 = 1_700_000_000.0
    cells = [
        cell("a", "raw", "eager", duration_s=20.0, worker="gw0", detail={"started_at": t0}),
        cell("b", "raw", "eager", duration_s=5.0, worker="gw1", detail={"started_at": t0}),
        cell("c", "raw", "eager", duration_s=10.0, worker="gw1", detail={"started_at": t0 + 15.0}),
    ]
    text = render_timings(results(cells, environment(cpu_count=2)), "r.jsonl")
    assert "## Timeline" in text
    assert "on 2 worker processes (replacements included): the first started, and the last ended, 25.0 s apart" in text
    assert "cells were running 1.4 at a time on average" in text  # 35 cell-s over 25 s
    assert "in each 10 s from the first start: 1.5 1.5 0.5." in text  # 0-10: a 10 + b 5; 10-20: a 10 + c 5; 20-25: c 5
    assert text.index("`c/raw/eager` (15-25 s)") < text.index("`a/raw/eager` (0-20 s)")


def test_the_timeline_gives_the_time_before_the_first_cell_when_the_header_knows_the_runs_start() -> None:
    t0 = 1_700_000_000.0
    cells = [cell("a", "raw", "eager", duration_s=2.0, worker="gw0", detail={"started_at": t0 + 31.5})]
    run = results(cells, environment(cpu_count=2))
    assert "The run's wall time adds its start" in render_timings(run, "r.jsonl")  # results from before the header knew
    run.header.update(started_at=t0, zygote_warmup_s=24.25)
    assert ("The first cell started 31.5 s after the run, 24.2 s of it the zygote's warm-up (the rest: the "
            "controller, starting the workers, each worker's collection); the run's wall time adds its end.") \
        in render_timings(run, "r.jsonl")
    run.header.update(zygote_ready_at=t0 + 10.0)  # `harness run` started it 14.25 s before the run (zygote_ahead)
    assert ("The first cell started 31.5 s after the run, 10.0 s of it waiting for the zygote's warm-up (24.2 s, begun "
            "14.2 s before the run; the rest: the controller,") in render_timings(run, "r.jsonl")
    run.header["zygote_warmup_s"] = None
    assert "The first cell started 31.5 s after the run (the controller, starting" in render_timings(run, "r.jsonl")


def test_cells_without_start_times_get_no_timeline() -> None:
    text = render_timings(results([cell("a", "raw", "eager", duration_s=1.0)], environment(cpu_count=2)), "r.jsonl")
    assert "Timeline" not in text


def test_fresh_processes_say_where_their_time_went() -> None:
    def fresh(kernel: str, pipeline: str, before: float, inside: float, after: float):
        timeline = {"before_main_s": before, "in_main_s": inside, "after_main_s": after}
        return cell(kernel, "raw", pipeline, duration_s=before + inside + after + 1,
                    detail={"fresh_process": {"how": "zygote", "timeline": timeline}})

    cells = [fresh("a", "export_roundtrip", 2.0, 0.5, 1.0), fresh("b", "export_roundtrip", 4.0, 0.25, 0.5),
             fresh("a", "aoti_fresh_process", 1.0, 0.125, 0.25),
             cell("a", "raw", "aoti_fresh_process", duration_s=3.0, detail={"fresh_process": {"timeline": {}}}),
             cell("a", "raw", "eager", duration_s=1.0)]
    text = render_timings(results(cells, environment(cpu_count=2)), "r.jsonl")
    section = text[text.index("## Fresh processes"):]
    # pipeline, processes, then the sum and the median of before, in and after main
    assert row(section, "export_roundtrip") == ["export_roundtrip", "2", "6", "3.00", "1", "0.38", "2", "0.75"]
    assert row(section, "aoti_fresh_process") == ["aoti_fresh_process", "1", "1", "1.00", "0", "0.12", "0", "0.25"]
    assert "| eager " not in section, "a cell with no fresh process is not counted"


def test_a_file_without_fresh_process_timelines_has_no_such_section() -> None:
    text = render_timings(results([cell("a", "raw", "aoti_fresh_process", duration_s=3.0, detail={"loader": "zygote"})],
                                  environment(cpu_count=2)), "r.jsonl")
    assert "## Fresh processes" not in text


def _long_first_run(t0: float):
    """A long cell, then ten short ones after it: the order a run's longest-group-first plan gives."""
    cells = [cell("long", "raw", "eager", duration_s=100.0, worker="gw0", detail={"started_at": t0})]
    cells += [cell(f"short{i}", "raw", "eager", duration_s=1.0, worker="gw0", detail={"started_at": t0 + 100.0 + i})
              for i in range(10)]
    return cells


def test_the_live_counts_time_left_is_replayed_weighed_by_earlier_durations_and_by_count() -> None:
    t0 = 1_700_000_000.0
    cells = _long_first_run(t0)
    run = results(cells, environment(cpu_count=1))
    run.header["started_at"] = t0
    earlier = {c.id: c.duration_s for c in cells}
    section = render_timings(run, "r.jsonl", earlier, "earlier.jsonl").split("## The live count's time left, replayed")[1]
    assert "weighing each cell by the durations in earlier.jsonl" in section
    # since the start, cells ended, left in fact, the estimate, by count; the run spans 110 s
    assert row(section, "55") == ["55", "0", "55", "55", "-"], "half the long cell's weight run in 55 s; a count knows nothing"
    assert row(section, "99") == ["99", "0", "11", "11", "-"], "99 of 110 s of work in 99 s"
    replayed = [line for line in section.splitlines() if re.match(r"\| \d", line)]
    assert len(replayed) == 9 and not replayed[-1].startswith("| 110 "), "nine tenths: at the end nothing is left"
    by_count = render_timings(run, "r.jsonl").split("replayed")[1]
    assert "none (no earlier durations: by count)" in by_count
    assert row(by_count, "99") == ["99", "0", "11", "-", "-"]


def test_timings_weighs_the_replay_by_the_file_asked_and_refuses_a_bad_one(tmp_path: Path, capsys) -> None:
    t0 = 1_700_000_000.0
    path = write_results(tmp_path / "run.jsonl", _long_first_run(t0))
    assert main(["timings", str(path), "--durations-from", str(path)]) == 0
    assert f"weighing each cell by the durations in {path}" in capsys.readouterr().out
    assert main(["timings", str(path), "--durations-from", str(tmp_path / "missing.jsonl")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "missing.jsonl" in error
