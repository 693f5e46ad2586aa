"""Selecting cells: names are validated, and each control runs first in its group."""

import pytest

from harness.run.selection import SelectionError, select_cells, validate
from harness.vocab import PIPELINES, STYLES


def test_no_names_means_all_in_vocabulary_order():
    assert validate("style", [], STYLES) == list(STYLES)


def test_comma_separated_and_repeated_names_are_deduplicated_in_vocabulary_order():
    assert validate("pipeline", ["vmap,eager", "eager"], PIPELINES) == ["eager", "vmap"]


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(SelectionError, match="unknown style 'rwa'; valid styles: native, raw"):
        validate("style", ["rwa"], STYLES)


def test_native_control_first_in_each_kernel_pipeline_group():
    cells = select_cells(["add"], ["raw", "native"], ["vmap", "eager"])
    assert [c.id for c in cells] == ["add/native/eager", "add/raw/eager", "add/native/vmap", "add/raw/vmap"]
    assert cells[0].group == "add/eager"


class _Spec:
    def __init__(self, source):
        self.source = source


SPECS = {"add": _Spec("kernels.add"), "sin": _Spec("kernels.sin"), "mine": _Spec("lib.py"), "theirs": _Spec("ep.mod")}


def test_kernels_from_alone_selects_only_that_sources_kernels():
    from harness.run.selection import chosen_kernels

    assert chosen_kernels([], SPECS, ["lib.py"]) == ["mine"]


def test_the_catalogue_joins_by_flag_or_by_name():
    from harness.run.selection import chosen_kernels

    assert chosen_kernels([], SPECS, ["lib.py"], with_catalogue=True) == list(SPECS)
    assert chosen_kernels(["add,mine"], SPECS, ["lib.py"]) == ["add", "mine"]


def test_without_kernels_from_every_loaded_kernel_is_asked():
    from harness.run.selection import chosen_kernels

    assert chosen_kernels([], SPECS, []) == list(SPECS)
    with pytest.raises(SelectionError, match="unknown kernel 'nope'"):
        chosen_kernels(["nope"], SPECS, ["lib.py"])


def test_the_pipelines_that_share_an_artifact_share_a_group_and_each_control_still_comes_first_in_its_pipeline():
    cells = select_cells(["add"], ["raw", "native"], ["aoti_fresh_process", "aoti", "eager", "export_roundtrip_bare"])
    assert {c.group for c in cells if c.pipeline.startswith("aoti")} == {"add/aoti*"}
    assert {c.group for c in cells if c.pipeline.startswith("export")} == {"add/export_roundtrip*"}
    assert [c.id for c in cells if c.group == "add/aoti*"] == [
        "add/native/aoti", "add/raw/aoti", "add/native/aoti_fresh_process", "add/raw/aoti_fresh_process"]
