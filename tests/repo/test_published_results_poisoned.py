"""Every chart the repository publishes stands on a run whose unwritten memory was poisoned (harness.domain.poison).

Without the poison, an output a kernel never wrote could hold the reference's answer and pass: the published
Liger-Kernel page had `liger_rms_norm/wrap_triton/flop_counter` as `pass` where FlopCounterMode never launches a bare
`wrap_triton` kernel (pytorch#167224; `_handle_higher_order_ops` in torch/utils/flop_counter.py returns without
running it), and a rerun of the same cell found 384,000 of 384,000 elements wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.results import read_results

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = sorted([REPO / "reports" / "gpu-results.jsonl", *(REPO / "reports" / "ecosystem").glob("*-results.jsonl")])


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda path: path.name)
def test_a_published_run_poisoned_what_kernels_did_not_write(path):
    environment = read_results(path).header.get("environment", {})
    assert environment.get("poison"), f"{path.relative_to(REPO)} was measured without the poison: run it again"


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda path: path.name)
def test_no_published_cell_passes_where_flop_counter_never_launched_the_kernel(path):
    results = read_results(path)
    torch_version = results.header.get("environment", {}).get("torch", "")
    if not torch_version.startswith(("2.11.", "2.12.", "2.13.", "2.14.", "2.15.")):
        pytest.skip(f"torch {torch_version}: pytorch#167224 is known for 2.11 to 2.15 only")
    passed = [cell.id for cell in results.cells
              if cell.style == "wrap_triton" and cell.pipeline == "flop_counter" and cell.outcome == "pass"]
    assert passed == [], f"{path.relative_to(REPO)}: {passed}"
