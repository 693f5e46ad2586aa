"""Every style is derived from a spec by the harness, and computes the reference in eager mode."""

import pytest
import torch

from harness.domain.spec import no_launch_wrap
from harness.domain.styles import build_style
from harness.run.environment import resolve_tier
from harness.vocab import STYLES
from kernels import add, silu, sin

DEVICE = torch.device("cuda" if resolve_tier("auto") == "gpu" else "cpu")


@pytest.mark.parametrize("spec", [add.SPEC, sin.SPEC, silu.SPEC], ids=lambda s: s.name)
@pytest.mark.parametrize("style", STYLES)
def test_each_style_matches_the_reference(spec, style):
    built = build_style(spec, style)
    args = spec.make_inputs(spec.sizes[0], DEVICE, torch.Generator().manual_seed(0))
    torch.testing.assert_close(built.call(*args), spec.reference(*args))


OPERATOR_STYLES = ("custom_op", "triton_op")  # the styles that make a torch.library operator


@pytest.mark.parametrize("style", STYLES)
def test_what_each_style_is_made_of(style):
    has_operator = style in OPERATOR_STYLES
    built = build_style(sin.SPEC, style)
    assert (built.overload is not None) == has_operator
    assert built.kernel_names == (() if style == "native" else ("sin_kernel",))
    if has_operator:
        assert built.overload.name() == f"tcm_{style}::sin"


def test_the_fake_impl_comes_from_the_launch_without_launching():
    x = torch.empty(7, dtype=torch.bfloat16, device="meta")
    out = silu.launch(no_launch_wrap, x)
    assert out.shape == (7,) and out.dtype == torch.bfloat16 and out.device.type == "meta"


def test_the_cpu_tier_can_autotune(tmp_path):
    """Without the CPU tier's wall-clock benchmarker, Triton's autotuner asks for a GPU driver and fails."""
    if resolve_tier("auto") != "cpu":
        pytest.skip("the autotune shim is for the CPU interpreter tier")
    from harness.run.cell import CellRequest
    from harness.run.isolation import run_inline

    for kernel in ("add_autotuned", "autotune_prune_configs", "autotune_reset_to_zero", "autotune_restore_value"):
        result = run_inline(CellRequest(kernel, "raw", "eager", tier="cpu"))
        assert result.outcome == "pass", result
