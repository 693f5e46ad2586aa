"""The vocabulary (docs/architecture.md) is one list, and every part of the harness uses exactly it."""

from harness.domain.pipelines import RUNNERS
from harness.domain.styles import BUILDERS
from harness.vocab import PIPELINE_FAMILIES, PIPELINES, STYLES, cell_id, split_cell_id


def test_pipeline_families_cover_every_pipeline_once():
    flattened = [p for family in PIPELINE_FAMILIES.values() for p in family]
    assert sorted(flattened) == sorted(PIPELINES)
    assert len(flattened) == len(set(flattened))


def test_every_pipeline_has_a_runner_and_every_style_a_builder():
    assert tuple(RUNNERS) == PIPELINES
    assert tuple(BUILDERS) == STYLES


def test_each_family_has_its_suite(pytestconfig):
    suites = {p.stem.removeprefix("test_") for p in (pytestconfig.rootpath / "matrix").glob("test_*.py")}
    assert suites == set(PIPELINE_FAMILIES)


def test_cell_ids_round_trip():
    assert split_cell_id(cell_id("add", "raw", "eager")) == ("add", "raw", "eager")
