"""KernelSpec(fake=...): a spec's own fake, validated as the spec is made, registered by custom_op and triton_op in
place of the fake derived from the launch, and recorded in the results header."""

import dataclasses

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from harness.domain.registry import KernelSourceError, load_specs
from harness.domain.spec import kernel_header
from harness.domain.styles import build_style
from kernels import add, data_dependent_output_int, data_dependent_output_int_fake

OWN = data_dependent_output_int_fake.SPEC
DERIVED = data_dependent_output_int.SPEC


@pytest.mark.parametrize("value, message", [
    ("not a function", "fake must be callable (fake(*arguments), a fake/meta implementation) or None; got str"),
    (lambda x: x, "fake(x) cannot take the op's 2 argument(s) (x, y): give it the same parameters as the op"),
])
def test_a_bad_fake_is_named_as_the_spec_is_made(value, message):
    with pytest.raises(ValueError) as error:
        dataclasses.replace(add.SPEC, fake=value)
    assert f"KernelSpec 'add': {message}" == str(error.value)


def test_a_plugin_with_a_bad_fake_is_one_line_naming_the_file_and_the_field(tmp_path):
    plugin = tmp_path / "bad_fake_kernels.py"
    plugin.write_text("import dataclasses\nfrom kernels import add\n"
                      "SPEC = dataclasses.replace(add.SPEC, name='bad_fake', fake=3)\n")
    with pytest.raises(KernelSourceError) as error:
        load_specs([str(plugin)], builtin=False, entry_points=False)
    message = str(error.value)
    assert len(message.splitlines()) == 1 and "bad_fake_kernels.py" in message and "fake must be callable" in message


def _traced_length(spec, style):
    """The output's length when the operator runs on fake tensors, as compile and export run it."""
    op = build_style(spec, style).call
    with FakeTensorMode(shape_env=ShapeEnv()) as mode:
        out = op(mode.from_tensor(torch.randn(64)))
    return out.shape[0]


@pytest.mark.parametrize("style", ["custom_op", "triton_op"])
def test_the_own_fake_gives_an_unbacked_size_where_the_derived_one_cannot_run(style):
    assert isinstance(_traced_length(OWN, style), torch.SymInt)
    with pytest.raises(Exception, match="data-dependent|data pointer|storage"):
        _traced_length(DERIVED, style)


def test_the_header_says_which_kernels_brought_their_own_fake():
    own, derived = kernel_header(OWN), kernel_header(DERIVED)
    assert own["own_fake"] is True and "own-fake" in own["features"]
    assert "own_fake" not in derived and "own-fake" not in derived["features"]
    plugin_like = kernel_header(dataclasses.replace(add.SPEC, fake=lambda x, y: torch.empty_like(x)))
    assert plugin_like["own_fake"] is True and plugin_like["features"] == [*add.SPEC.features, "own-fake"]
