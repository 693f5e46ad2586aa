"""harness.run.confirm_sample: above --confirm-sample changed cells, a deterministic sample spread across pipelines,
changes, kernels and styles is confirmed; below it, every cell."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from harness.results import CellResult
from harness.run.confirm_sample import choose_sample, resolve_sample, sample_size, stratum

KERNELS = ("add", "sin", "silu", "softmax", "add_inplace", "two_outputs")
STYLES = ("native", "raw", "autograd_function", "custom_op", "triton_op", "wrap_triton")


def _cell(cell_id: str, outcome: str) -> CellResult:
    kernel, style, pipeline = cell_id.split("/")
    return CellResult(id=cell_id, kernel=kernel, style=style, pipeline=pipeline, outcome=outcome)


def _changes() -> tuple[list[CellResult], dict[str, str]]:
    """A new torch's night: 36 export_strict cells pass -> fail, 12 opcheck cells fail -> pass, 4 eager pass -> wrong."""
    cells, expected = [], {}
    for pipeline, was, now, styles in (("export_strict", "pass", "fail", STYLES), ("opcheck", "fail", "pass", STYLES[:2]),
                                       ("eager", "pass", "wrong", STYLES[:1])):
        for kernel in KERNELS[: 4 if pipeline == "eager" else 6]:
            for style in styles:
                cell = _cell(f"{kernel}/{style}/{pipeline}", now)
                cells.append(cell)
                expected[cell.id] = was
    return cells, expected


def test_at_or_below_the_threshold_every_changed_cell_is_confirmed() -> None:
    cells, expected = _changes()
    assert choose_sample(cells[:8], expected, 8) == (cells[:8], [])
    assert choose_sample(cells, expected, 0) == (cells, [])  # 0: no sampling


def test_above_the_threshold_a_sample_of_that_size_and_the_rest_left() -> None:
    cells, expected = _changes()
    chosen, left = choose_sample(cells, expected, 8)
    assert len(chosen) == 8 and len(left) == len(cells) - 8
    assert {cell.id for cell in chosen} | {cell.id for cell in left} == {cell.id for cell in cells}
    assert not {cell.id for cell in chosen} & {cell.id for cell in left}
    assert [cell.id for cell in left] == [cell.id for cell in cells if cell not in chosen]  # the run's order kept


def test_the_sample_is_the_same_whatever_order_the_cells_finished_in() -> None:
    cells, expected = _changes()
    chosen = {cell.id for cell in choose_sample(cells, expected, 8)[0]}
    for seed in range(5):
        shuffled = cells[:]
        random.Random(seed).shuffle(shuffled)
        assert {cell.id for cell in choose_sample(shuffled, expected, 8)[0]} == chosen


def test_every_pipeline_and_change_is_in_the_sample_even_the_smallest() -> None:
    cells, expected = _changes()
    chosen, _ = choose_sample(cells, expected, 6)
    counts = Counter(stratum(cell, expected) for cell in chosen)
    assert set(counts) == {stratum(cell, expected) for cell in cells}  # 3 groups, 36, 12 and 4 cells
    assert counts[("export_strict", "pass", "fail")] == 2 == counts[("eager", "pass", "wrong")]


def test_within_a_group_the_sample_spreads_over_kernels_and_styles() -> None:
    cells, expected = _changes()
    export = [cell for cell in cells if cell.pipeline == "export_strict"]  # one group of 6 kernels x 6 styles
    chosen, _ = choose_sample(export, expected, 6)
    assert len({cell.kernel for cell in chosen}) == 6 and len({cell.style for cell in chosen}) == 6


def test_auto_is_a_cell_per_worker_and_a_bad_value_is_named() -> None:
    assert resolve_sample("auto", 2) == 2 and resolve_sample("auto", 8) == 8 and resolve_sample("5", 8) == 5
    assert resolve_sample("0", 2) == 0
    for bad in ("-1", "many"):
        with pytest.raises(ValueError, match=f"--confirm-sample {bad}: expected auto"):
            resolve_sample(bad, 2)


def test_the_threshold_decides_whether_to_sample_and_never_confirms_fewer_than_the_sample() -> None:
    assert sample_size(4, 2, 4) == 0 and sample_size(5, 2, 4) == 2  # 0: every changed cell
    assert sample_size(6, 8, 4) == 0 and sample_size(9, 8, 4) == 8 and sample_size(500, 0, 4) == 0
