"""The spec modules for real libraries (kernels/ecosystem/): examples of `--kernels-from`, never the catalogue.

Their libraries are optional extras (`liger`, `fla`, `flaggems`), never needed by these tests or CI: where a library
is missing its tests skip, and what is checked without any of them is that the catalogue stays apart and that a
missing library is one clear line. Where a library is installed (the GPU machine; any machine with the extra), its
specs load and validate, each kernel the library gives a backward has one, and on the CPU tier the kernels that the
interpreter runs are launched in a real cell and checked against the reference, gradients included.
"""

from __future__ import annotations

import importlib.util

import pytest

from harness.domain.registry import KernelSourceError, load_specs
from harness.run.cell import CellRequest
from harness.run.environment import resolve_tier
from harness.run.isolation import run_inline
from kernels import BUILTIN_MODULES
from kernels.ecosystem._requires import LibraryMissing, require

TIER = resolve_tier("auto")
MODULES = {"liger": "liger_kernel", "fla": "fla", "flag_gems": "flag_gems"}
# The kernels whose library launches a backward kernel of its own; FlagGems has none for add.
WITH_BACKWARD = {
    "liger": {"liger_rms_norm", "liger_layer_norm", "liger_swiglu", "liger_geglu", "liger_softmax", "liger_relu_squared",
              "liger_dyt"},
    "fla": {"fla_rms_norm", "fla_layer_norm", "fla_l2norm", "fla_logsigmoid", "fla_chunk_local_cumsum",
            "fla_chunk_linear_attn"},
    "flag_gems": {"flag_gems_silu", "flag_gems_gelu_tanh", "flag_gems_sigmoid", "flag_gems_softmax",
                  "flag_gems_layer_norm"},
}


def loaded(library: str):
    """The library's specs, or a skip saying why they cannot load here (library missing; FlagGems without a GPU)."""
    if importlib.util.find_spec(MODULES[library]) is None:
        pytest.skip(f"{MODULES[library]} is not installed (an optional extra)")
    try:
        return load_specs([f"kernels.ecosystem.{library}"], builtin=False, entry_points=False)
    except KernelSourceError as exc:
        if library == "flag_gems" and TIER == "cpu" and "device" in str(exc).lower():
            pytest.skip(f"FlagGems looks for a GPU at import: {exc}")
        raise


def test_the_ecosystem_modules_are_not_the_catalogue():
    assert not [module for module in BUILTIN_MODULES if module.startswith("kernels.ecosystem")]
    assert not [name for name in load_specs() if name.split("_")[0] in ("liger", "fla", "flag")]


def test_a_missing_library_is_one_line_naming_the_extra():
    with pytest.raises(LibraryMissing, match=r"needs no-such-library \(written against 1\.0\): pip install "
                                             r"'triton-compat-matrix\[nosuch\]'"):
        require("no-such-library", "1.0", "nosuch")


@pytest.mark.parametrize("library", sorted(MODULES))
def test_the_specs_load_and_each_library_backward_is_there(library):
    specs = loaded(library)
    assert len(specs) >= 6
    assert {name for name, spec in specs.items() if spec.has_backward} == WITH_BACKWARD[library]
    assert all(spec.description and spec.features for spec in specs.values())


@pytest.mark.parametrize("library", sorted(MODULES))
def test_every_style_builds(library):
    """Building a custom_op/triton_op with a backward launches the spec on meta tensors to size the backward's
    schema: a launch that enters a device context there (FlagGems' `torch_device_fn.device`) must still build."""
    from harness.domain.styles import build_style
    from harness.vocab import STYLES

    for spec in loaded(library).values():
        for style in STYLES:
            build_style(spec, style)


@pytest.mark.slow
@pytest.mark.skipif(TIER != "cpu", reason="the interpreter's run of the launches; the GPU runs the whole matrix")
@pytest.mark.parametrize("library, kernel", [("liger", "liger_relu_squared"), ("fla", "fla_rms_norm"),
                                             ("fla", "fla_chunk_local_cumsum")])
def test_a_launch_as_the_library_writes_it_runs_and_matches_the_reference(library, kernel):
    loaded(library)
    result = run_inline(CellRequest(kernel, "autograd_function", "eager_backward", TIER,
                                    kernels_from=[f"kernels.ecosystem.{library}"]))
    assert result.outcome == "pass", f"{result.stage}: {result.error_type}: {result.error}"
