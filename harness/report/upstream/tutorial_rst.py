"""The measured chart as the tutorial writes it: an RST `.. list-table::`, alone or in place in its source.

The tutorial's source is a sphinx-gallery .py file; its chart is a list-table inside a `#` comment block.
`rewrite_source` changes only the words of the table's cells that were measured (a row or column we
do not measure keeps the tutorial's word) and puts one line naming the versions and the GPU above
the table, replacing the line an earlier rewrite put there: the rest of the file is left byte for byte.
"""

from __future__ import annotations

import re

from harness.report.markdown.aggregate import final_cells
from harness.report.markdown.environment import tier_of
from harness.report.upstream.tutorial_chart import Claim, TutorialChart, TutorialChartError, claim_for
from harness.results import ResultsFile

MEASURED_PREFIX = "The chart below was measured with"
# The labels as the tutorial's RST writes them (its markup), by the plain label of tutorial-chart.json.
RST_LABELS: dict[str, str] = {
    "Triton kernel (no explicit torch.library wrapper)": "Triton kernel (no explicit ``torch.library`` wrapper)",
    "torch.library.triton_op": "``torch.library.triton_op``",
    "torch.library.custom_op": "``torch.library.custom_op``",
    "Supports torch.compile": "Supports ``torch.compile``",
    "Supports torch.compile(fullgraph=True)": "Supports ``torch.compile(fullgraph=True)``",
}
LIST_TABLE = re.compile(r"^#\s*\.\. list-table::")
ROW_START = re.compile(r"^(#\s+\* -)(?: (.*))?$")
ROW_ITEM = re.compile(r"^(#\s+- )(.*)$")


def measured_line(results: ResultsFile) -> str:
    """One sentence: the versions and the GPU (or the CPU interpreter) the words were measured on."""
    environment = results.environment
    kernels = len({cell.kernel for cell in results.cells})
    if tier_of(environment) == "cpu":
        where = "the Triton interpreter on CPU (TRITON_INTERPRET=1), not a GPU"
    else:
        where = f"{environment.get('gpu') or 'an unnamed GPU'} (CUDA {environment.get('cuda') or '?'})"
    return (f"{MEASURED_PREFIX} torch {environment.get('torch')} and triton {environment.get('triton')} on {where},"
            f" over {kernels} kernels, by triton-compat-matrix {results.header.get('harness_version', '?')}.")


def _word(claim: Claim | None, said: str) -> str:
    return claim.measured if claim is not None and claim.measured is not None else said


def render_list_table(results: ResultsFile, chart: TutorialChart) -> str:
    """The chart as RST, in the tutorial's words and labels, after the line naming versions and GPU."""
    cells = final_cells(results)
    lines = [measured_line(results), "", ".. list-table::", "   :header-rows: 1", "", "   * -"]
    lines += [f"     - {RST_LABELS.get(column, column)}" for column in chart.columns]
    for row, words in chart.rows.items():
        lines.append(f"   * - {RST_LABELS.get(row, row)}")
        lines += [f"     - {_word(claim_for(cells, row, column, said), said)}" for column, said in zip(chart.columns, words)]
    return "\n".join(lines) + "\n"


def rewrite_source(text: str, results: ResultsFile, name: str = "the tutorial") -> str:
    """`text` (the tutorial's .py source) with its list-table's measured words and the versions line."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    starts = [number for number, line in enumerate(lines) if LIST_TABLE.match(line)]
    if not starts:
        raise TutorialChartError(f"{name}: no `# .. list-table::` in a comment block")
    start = starts[0]
    rows: list[list[int]] = []  # each row: the line numbers of its items, the stub first
    number = start + 1
    while number < len(lines) and lines[number].startswith("#") and not lines[number].startswith("##"):
        line = lines[number]
        if ROW_START.match(line):
            rows.append([number])
        elif ROW_ITEM.match(line) and rows:
            rows[-1].append(number)
        elif line.strip("# ") and not line.lstrip("# ").startswith(":"):
            break  # the comment block goes on after the table
        number += 1
    if len(rows) < 2:
        raise TutorialChartError(f"{name}: the list-table at line {start + 1} has no header row and rows")
    columns = [_item(lines[n]) for n in rows[0][1:]]
    cells = final_cells(results)
    for row in rows[1:]:
        stub = _item(lines[row[0]])
        for column, line_number in zip(columns, row[1:]):
            said = _item(lines[line_number])
            claim = claim_for(cells, stub, column, said)
            if claim is not None and claim.measured is not None:
                prefix = ROW_ITEM.match(lines[line_number])
                assert prefix is not None
                lines[line_number] = prefix.group(1) + claim.measured
    versions = f"# {measured_line(results)}"
    if start >= 2 and lines[start - 2].startswith(f"# {MEASURED_PREFIX}"):
        lines[start - 2] = versions
    else:
        lines[start:start] = [versions, "#"]
    return newline.join(lines)


def _item(line: str) -> str:
    found = ROW_START.match(line) or ROW_ITEM.match(line)
    return (found.group(2) or "").strip() if found else ""
