"""The rendered report: goldens, valid tables for any input, and the environment always shown.

Goldens live in tests/unit/report/golden/ (see report_helpers.check_golden; regenerate
with `UPDATE_GOLDENS=1 python3 -m pytest tests/unit/report`). A results file dropped
into tests/fixtures/*.jsonl needs a golden of its own, golden/fixtures/<name>.md: its test
fails until `UPDATE_GOLDENS=1` writes it (review and commit the new file).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from report_helpers import (
    GPU_ENVIRONMENT,
    cell,
    check_golden,
    environment,
    header,
    mixed_cells,
    results,
)

from harness.report.markdown.render import render_report
from harness.report.upkeep.docs import render_region
from harness.results import CellResult, ResultsFile, read_results
from harness.vocab import OUTCOMES, PIPELINES, STAGES, STYLES

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"
REPO = Path(__file__).parents[3]


SAMPLES: dict[str, Callable[[], ResultsFile]] = {
    "mixed_gpu": lambda: results(mixed_cells()),
    "mixed_cpu": lambda: results(mixed_cells(), environment(tier="cpu", interpreter=True, gpu=None, cuda=None, driver=None)),
    "empty_old_header": lambda: ResultsFile(header={"record": "header", "schema": 1}, cells=[]),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_report_golden(name: str) -> None:
    check_golden(f"{name}.md", render_report(SAMPLES[name]()))


def test_docs_region_golden() -> None:
    check_golden("docs_region.md", render_region(results(mixed_cells())) + "\n")


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_fixture_golden(fixture: Path) -> None:
    check_golden(f"fixtures/{fixture.stem}.md", render_report(read_results(fixture)))


if not list(FIXTURES.glob("*.jsonl")):
    test_fixture_golden = pytest.mark.skip(reason="no tests/fixtures/*.jsonl yet")(test_fixture_golden)


def test_same_input_same_bytes() -> None:
    shuffled = list(reversed(mixed_cells()))
    assert render_report(results(shuffled)) == render_report(results(mixed_cells()))


def test_cpu_tier_says_it_is_the_interpreter() -> None:
    text = render_report(results([cell("add", "raw", "eager")], environment(tier="cpu", interpreter=True)))
    assert "CPU interpreter tier" in text and "TRITON_INTERPRET=1" in text and "not from a GPU" in text
    assert "CPU interpreter tier" not in render_report(results([cell("add", "raw", "eager")]))


def test_every_non_clean_chart_cell_has_a_footnote_naming_its_evidence() -> None:
    text = render_report(results(mixed_cells()))
    chart = text.split("## Which API should I use?")[1].split("### How to read")[0]
    assert "Rarely (1/2) \\[2\\]" in chart
    assert "2. fail at trace: torch.\\_dynamo.exc.Unsupported: call\\_function" in chart
    assert "\\\n   1 cell: kernels softmax; pipelines compile\\_fullgraph; styles raw\n" in chart
    assert "call\\_function &#96;triton\\_kernel\\_wrapper&#96;" in chart and "second line" not in chart


def test_the_report_never_imports_torch(tmp_path: Path) -> None:
    from report_helpers import write_results

    path = write_results(tmp_path / "r.jsonl", mixed_cells())
    argv = ["python -m harness.report", "report", str(path), "-o", str(tmp_path / "r.md")]
    code = (
        "import runpy, sys\n"
        "sys.modules['torch'] = None  # any `import torch` now raises\n"
        f"sys.argv = {argv!r}\n"
        "runpy.run_module('harness.report', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "torch" in (tmp_path / "r.md").read_text(encoding="utf-8")


UNESCAPED_PIPE = re.compile(r"(?<!\\)(?:\\\\)*\|")


def assert_tables_are_well_formed(markdown: str) -> None:
    """Every table row has its header's number of cell separators, and a blank line ends every table."""
    lines = markdown.split("\n")
    index = 0
    while index < len(lines):
        if not lines[index].startswith("|"):
            index += 1
            continue
        width = len(UNESCAPED_PIPE.findall(lines[index]))
        assert re.fullmatch(r"\|(-+\|)+", lines[index + 1]), lines[index + 1]
        while index < len(lines) and lines[index].startswith("|"):
            assert len(UNESCAPED_PIPE.findall(lines[index])) == width, lines[index]
            index += 1
        assert index == len(lines) or lines[index] == "", f"a table ran into {lines[index]!r}"


hostile = st.text(min_size=0, max_size=40)
names = st.one_of(st.sampled_from(["add", "soft|max", "a`b", "<i>x</i>"]), st.text(min_size=1, max_size=12))


@st.composite
def random_results(draw: st.DrawFn) -> ResultsFile:
    cells = []
    for _ in range(draw(st.integers(0, 25))):
        kernel = draw(names)
        style = draw(st.sampled_from(STYLES + ("weird|style",)))
        pipeline = draw(st.sampled_from(PIPELINES + ("new\npipeline",)))
        cells.append(CellResult(
            id=f"{kernel}/{style}/{pipeline}", kernel=kernel, style=style, pipeline=pipeline,
            outcome=draw(st.sampled_from(OUTCOMES + ("mystery",))), stage=draw(st.sampled_from((None,) + STAGES)),
            error_type=draw(st.one_of(st.none(), hostile)), error=draw(st.one_of(st.none(), hostile)),
            reason=draw(st.one_of(st.none(), hostile)),
        ))
    env = {key: draw(st.one_of(st.none(), hostile)) for key in GPU_ENVIRONMENT}
    env["tier"] = draw(st.sampled_from(["gpu", "cpu", None]))
    return ResultsFile(header=header(env, started=draw(hostile), command=[draw(hostile)]), cells=cells)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_results())
def test_any_results_render_to_well_formed_tables(run: ResultsFile) -> None:
    assert_tables_are_well_formed(render_report(run))
    assert_tables_are_well_formed(render_region(run))


def test_chart_footnotes_group_cells_by_cause_with_numbers_names_and_paths_made_alike() -> None:
    from harness.report.markdown.chart import render_chart
    from harness.report.markdown.footnotes import CauseNotes

    failing = [cell(kernel, style, "compile", "fail", stage="trace", error_type="RuntimeError",
                    error=f"{kernel}_kernel at 0x7f{n}a0 wrote /tmp/tmp{n}xyz/out.py after {n} tries")
               for n, (kernel, style) in enumerate([("add", "raw"), ("sin", "raw"), ("sin", "autograd_function")])]
    notes = CauseNotes()
    chart = render_chart(results(failing + [cell("add", "raw", "eager", "fail")]), notes)
    rendered = notes.render().splitlines()
    assert rendered[2] == "2. fail at trace: RuntimeError: &lt;kernel&gt; at &lt;address&gt; wrote &lt;tmp&gt; after N tries\\"
    assert rendered[3] == "   3 cells: kernels add, sin; pipelines compile; styles raw, autograd\\_function"
    assert len(rendered) == 4  # two causes, two lines each
    assert "No (0/2) \\[2\\]" in chart


def test_the_environment_table_names_the_fresh_processes_cuda_queues_where_the_run_set_them() -> None:
    from report_helpers import environment, header

    from harness.report.markdown.environment import environment_table

    rows = [[part.strip().replace("\\", "") for part in line.strip("|").split("|")]
            for line in environment_table(header(environment(fresh_process_cuda_connections="1"))).splitlines()]
    assert ["fresh processes' CUDA_DEVICE_MAX_CONNECTIONS", "1"] in rows
    assert "CONNECTIONS" not in environment_table(header()).replace("\\", "")
