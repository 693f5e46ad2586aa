"""docs/tolerance.md explains every `wrong` cell of the published results: its table's counts are the file's."""

import re
from collections import Counter
from pathlib import Path

from harness.results import CellResult, read_results

REPO = Path(__file__).resolve().parents[2]
SECTION = "## The `wrong` cells of the published results"
GROUPS = ("strided views", "flop counter skips the launch", "tensor descriptor compiled")  # the table's row order


def _group(cell: CellResult) -> str:
    if cell.pipeline == "eager_inputs":
        return "strided views"
    if cell.pipeline == "flop_counter" and cell.style == "wrap_triton":
        return "flop counter skips the launch"
    if cell.kernel == "tensor_descriptor":
        return "tensor descriptor compiled"
    return "unexplained"


def test_every_published_wrong_cell_is_in_the_documented_groups():
    wrong = [cell for cell in read_results(REPO / "reports" / "gpu-results.jsonl").cells if cell.outcome == "wrong"]
    groups = Counter(_group(cell) for cell in wrong)
    assert "unexplained" not in groups, [cell.id for cell in wrong if _group(cell) == "unexplained"]
    section = (REPO / "docs" / "tolerance.md").read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    documented = [int(count) for count in re.findall(r"^\| (\d+): ", section, flags=re.MULTILINE)]
    assert documented == [groups[name] for name in GROUPS]
    assert f"has {len(wrong)} `wrong` cells" in " ".join(section.split())
