"""The same results render to the same bytes: whatever the order of the cell lines, whatever the hash seed.

Each variant (the files as committed; cell lines shuffled; cell lines reversed) sits in a folder
of its own under the same file names, and is rendered by a separate Python process with its
own PYTHONHASHSEED, through the real CLI: report, diff (Markdown and text), history, docs and
the run summary. Every output must be byte-identical across the variants.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import cell, mixed_cells, write_results

REPO = Path(__file__).resolve().parents[3]
# The committed fixtures and the published GPU results (the whole catalogue, which the docs are rendered from).
FIXTURES = sorted((REPO / "tests" / "fixtures").glob("*.jsonl")) + [REPO / "reports" / "gpu-results.jsonl"]
VARIANTS = {"as-written": "0", "shuffled": "1", "reversed": "4242"}  # variant -> PYTHONHASHSEED

RENDER_ALL = r"""
import sys
from pathlib import Path
from harness.cli import main
from harness.results import read_results
from harness.report.markdown.summary import render_summary, render_summary_markdown

names = sorted(p.name for p in Path('.').glob('*.jsonl'))
out = Path('out')
out.mkdir()
for name in names:
    assert main(['report', name, '-o', f'out/report-{name}.md']) == 0
    results = read_results(name)
    Path(f'out/summary-{name}.md').write_text(render_summary_markdown(results, 'Matrix summary') + render_summary(results))
for old, new in zip(names, names[1:]):
    main(['diff', old, new, '-o', f'out/diff-{old}-{new}.md'])
    main(['diff', old, new, '--format', 'text', '-o', f'out/diff-{old}-{new}.txt'])
assert main(['history', *names, '-o', 'out/history.md']) == 0
Path('out/doc.md').write_text('# Doc\n\n<!-- api-choice:begin -->\n<!-- api-choice:end -->\n\ntail\n')
assert main(['docs', 'out/doc.md', '--results', names[-1]]) == 0
"""


def inputs() -> dict[str, list[str]]:
    """file name -> its lines: the committed fixtures, and a mixed file with flaky cells and unknown names."""
    files = {path.name: path.read_text(encoding="utf-8").splitlines(keepends=True) for path in FIXTURES}
    extra = [cell("matmul", "raw", "compile", "flaky", stage="run", error_type="RuntimeError", error="sometimes",
                  repeats=["pass", "fail"]),
             cell("matmul", "pallas", "eager", "mystery"), cell("matmul", "raw", "eager_future", "fail")]
    return files | {"mixed.jsonl": _lines(mixed_cells() + extra)}


def _lines(cells: list) -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = write_results(Path(folder) / "m.jsonl", cells)
        return path.read_text(encoding="utf-8").splitlines(keepends=True)


def arrange(lines: list[str], variant: str) -> str:
    header, cells = lines[0], lines[1:]
    if variant == "shuffled":
        cells = cells[:]
        random.Random(7).shuffle(cells)
    elif variant == "reversed":
        cells = cells[::-1]
    return header + "".join(cells)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, bytes]]:
    """variant -> {output file name: bytes}, each variant rendered in its own process and hash seed."""
    files = inputs()
    outputs: dict[str, dict[str, bytes]] = {}
    for variant, seed in VARIANTS.items():
        folder = tmp_path_factory.mktemp(variant)
        for name, lines in files.items():
            text = arrange(lines, variant)
            assert variant == "as-written" or len(lines) < 3 or text != "".join(lines), "the variant must change the order"
            (folder / name).write_text(text, encoding="utf-8")
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-c", RENDER_ALL], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        outputs[variant] = {p.name: p.read_bytes() for p in sorted((folder / "out").iterdir())}
    return outputs


def kinds(outputs: dict[str, bytes], prefix: str) -> list[str]:
    return [name for name in outputs if name.startswith(prefix)]


@pytest.mark.parametrize("prefix", ["report-", "diff-", "history", "doc.md", "summary-"])
def test_output_does_not_depend_on_line_order_or_hash_seed(rendered: dict[str, dict[str, bytes]], prefix: str) -> None:
    reference = rendered["as-written"]
    names = kinds(reference, prefix)
    assert names, f"nothing rendered for {prefix}"
    for variant, outputs in rendered.items():
        differing = [name for name in names if outputs.get(name) != reference[name]]
        assert differing == [], f"{variant}: {differing}"
