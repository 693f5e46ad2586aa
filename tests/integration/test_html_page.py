"""The HTML page in a real headless browser (Chromium from the OS packages): it renders without a JS error,
shows every cell of a small results file, a filter in the URL changes what is shown, and a screenshot is kept.

Chromium is a system tool nothing here installs: without it the test skips with one line saying how to install it,
also in `nox -s tests`; in CI (CI=true, as .ci/run sets it, which installs chromium) it fails instead
(tests/required_tools.py).
The screenshot is written under pytest's tmp dir, printed, and never committed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from required_tools import every_tool_missing, missing_tool

from harness.report.page.heatmap_png import write_heatmap_png
from harness.report.page.html import render_html
from harness.results import CellResult, ResultsFile


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    missing_tool("chromium", "optional, for the HTML page's browser test: apt-get install chromium", system=True)


def browse(page: Path, *args: str, query: str = "") -> subprocess.CompletedProcess:
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
               *args, page.as_uri() + query]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def small_results() -> ResultsFile:
    """Two kernels x two styles x two pipelines, with a failure that carries hostile text."""
    cells = []
    for kernel in ("add", "sin"):
        for style in ("raw", "custom_op"):
            for pipeline in ("eager", "compile_fullgraph"):
                failing = kernel == "sin" and style == "raw" and pipeline == "compile_fullgraph"
                cells.append(CellResult(id=f"{kernel}/{style}/{pipeline}", kernel=kernel, style=style,
                                        pipeline=pipeline, outcome="fail" if failing else "pass",
                                        stage="trace" if failing else None,
                                        error_type="Unsupported" if failing else None,
                                        error="</script><b>boom</b>" if failing else None))
    header = {"environment": {"torch": "2.13.0+cpu", "triton": "3.7.1", "tier": "cpu", "interpreter": True},
              "started": "2026-01-01T00:00:00+00:00",
              "kernels": {"add": {"features": ["grid-lambda"]}, "sin": {"features": ["math"]}}}
    return ResultsFile(header=header, cells=cells)


def rendered(dom: str) -> tuple[str, int, str]:
    marker = re.search(r'data-rendered="([a-z]+)"', dom)
    status = re.search(r'id="status">([^<]*)<', dom)
    return (marker.group(1) if marker else "", len(re.findall(r'data-cell="', dom)), status.group(1) if status else "")


@pytest.mark.slow  # a browser start takes seconds
def test_the_page_renders_every_cell_filters_and_keeps_a_screenshot(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html([("small.jsonl", small_results())]), encoding="utf-8")
    shown = browse(page, "--dump-dom")
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert rendered(shown.stdout) == ("heatmap", 8, "shown 8 of 8 cells")
    assert "<b>boom</b>" not in shown.stdout  # the message is text, never markup
    assert not re.search(r"CONSOLE|Uncaught", shown.stderr), shown.stderr[-2000:]

    failed = browse(page, "--dump-dom", query="#outcome=fail")
    assert rendered(failed.stdout) == ("heatmap", 1, "shown 1 of 8 cells")
    assert rendered(browse(page, "--dump-dom", query="#feature=math&style=custom_op").stdout)[1] == 2

    screenshot = tmp_path / "report.png"
    browse(page, f"--screenshot={screenshot}", "--window-size=1400,900")
    print(f"screenshot: {screenshot}", file=sys.stderr)
    assert screenshot.is_file() and screenshot.stat().st_size > 1000


@pytest.mark.slow  # a browser start takes seconds
def test_two_versions_add_the_history_view(tmp_path: Path) -> None:
    older = small_results()
    older.header = json.loads(json.dumps(older.header))
    older.header["environment"]["torch"] = "2.12.0+cpu"
    older.cells = [CellResult(**{**c.__dict__, "outcome": "fail", "stage": "trace", "error_type": "X", "error": "x"})
                   if c.pipeline == "eager" and c.style == "raw" else c for c in older.cells]
    page = tmp_path / "history.html"
    page.write_text(render_html([("new.jsonl", small_results()), ("old.jsonl", older)]), encoding="utf-8")
    dom = browse(page, "--dump-dom", query="#view=history").stdout
    assert rendered(dom)[0] == "history" and "history of 2 versions" in dom
    assert 'class="v-Yes changed"' in dom  # raw's inference went No -> Yes from 2.12 to 2.13


@pytest.mark.slow  # matplotlib's import and drawing
def test_the_png_heatmap_is_drawn(tmp_path: Path) -> None:
    png = write_heatmap_png([("small.jsonl", small_results())], tmp_path / "heatmap.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("environ, required", [
    ({}, False), ({"TCM_REQUIRE_TOOLS": "1"}, False), ({"CI": "true"}, True), ({"CI": "true", "TCM_REQUIRE_TOOLS": "1"}, True)])
def test_without_a_browser_the_test_skips_with_one_line_and_fails_only_in_ci(monkeypatch, environ, required) -> None:
    """`nox -s tests` (TCM_REQUIRE_TOOLS=1) on a machine without chromium skips; CI, which installs it, fails."""
    every_tool_missing(monkeypatch, environ)
    outcome = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(outcome) as raised:
        chromium()
    message = str(raised.value)
    assert "\n" not in message and message.startswith("chromium is not installed")
    assert "apt-get install chromium" in message
