"""Each call site is the user code it names, and calls the style's op with the caller's arguments."""

import pytest
import torch

from harness.domain.call_sites import site_source
from harness.domain.styles import build_style
from harness.run.selection import chosen_styles, select_cells
from harness.vocab import CALL_SITE_PIPELINES, CALL_SITE_STYLES, cell_id, split_style
from kernels import add

DEVICE = torch.device("cpu")


@pytest.mark.parametrize("style", CALL_SITE_STYLES)
def test_every_call_site_returns_what_the_op_returns(style):
    built = build_style(add.SPEC, style)
    x, y = torch.ones(8), torch.full((8,), 2.0)
    torch.testing.assert_close(built.call(x, y), x + y)


def test_the_module_attribute_site_holds_apply_as_an_attribute():
    built = build_style(add.SPEC, "autograd_function@module_attribute")
    assert isinstance(built.call, torch.nn.Module)
    assert built.call.f.__name__ == "apply"
    assert "self.f = Function.apply" in site_source(add.SPEC, "module_attribute")
    assert "function_apply = Function.apply" in site_source(add.SPEC, "module_alias")


def test_a_call_site_cell_id_names_style_and_site():
    assert cell_id("add", "raw", "aoti", "free_function") == "add/raw@free_function/aoti"
    assert split_style("raw@free_function") == ("raw", "free_function")
    assert split_style("raw") == ("raw", "")


def test_call_site_styles_are_asked_only_in_call_site_pipelines():
    cells = select_cells(["add"], ["raw", "raw@free_function"], ["eager", "compile", "aoti"])
    assert [cell.id for cell in cells] == ["add/raw/eager", "add/raw/compile", "add/raw@free_function/compile",
                                           "add/raw/aoti", "add/raw@free_function/aoti"]
    assert set(CALL_SITE_PIPELINES) == {"compile", "compile_fullgraph", "export_strict", "export_nonstrict", "aoti"}


def test_the_gpu_default_asks_call_sites_and_the_cpu_default_does_not():
    assert set(CALL_SITE_STYLES) <= set(chosen_styles([], every=False, tier="gpu"))
    assert not set(CALL_SITE_STYLES) & set(chosen_styles([], every=False, tier="cpu"))
    assert set(CALL_SITE_STYLES) <= set(chosen_styles([], every=True, tier="cpu"))
    assert chosen_styles(["autograd_function@module_alias"], every=False, tier="cpu") == ["autograd_function@module_alias"]
