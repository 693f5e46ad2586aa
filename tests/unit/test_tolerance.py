"""The tolerance model (docs/tolerance.md): rounding is never `wrong`, a real bug always is."""

import pytest
import torch

from harness.domain.checking import MismatchError, assert_close
from harness.domain.spec import KernelSpec
from harness.domain.tolerance import FACTOR, ToleranceOverride, allowance


def weight_gradient(x: torch.Tensor, g: torch.Tensor, rows_per_program: int, rows_left_out: int = 0) -> torch.Tensor:
    """How Liger-style kernels reduce a weight gradient: each program sums its rows in fp32, torch sums the programs."""
    used = x * g
    if rows_left_out:
        used[-rows_left_out:] = 0
    partials = torch.stack([used[i:i + rows_per_program].sum(0) for i in range(0, len(x), rows_per_program)])
    return partials.sum(0)


def reduction_case(rows: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(rows, 128, generator=generator), torch.randn(rows, 128, generator=generator)


@pytest.mark.parametrize("seed", range(20))
def test_per_program_partial_sums_pass(seed):
    x, g = reduction_case(4096, seed)
    assert_close(weight_gradient(x, g, 64), (x * g).sum(0), (x.double() * g.double()).sum(0), what="gradients[1]")


def test_per_element_allowance_would_call_rounding_wrong():
    """Why the allowance is per tensor: at some element PyTorch's own error is near zero by luck, while the
    kernel's other summation order is not; over these seeds a per-element allowance fails at least once."""
    failures = 0
    for seed in range(20):
        x, g = reduction_case(4096, seed)
        exact = (x.double() * g.double()).sum(0)
        error = (weight_gradient(x, g, 64).double() - exact).abs()
        per_element = torch.clamp(1e-5 + 1.3e-6 * exact.abs(), min=FACTOR * ((x * g).sum(0).double() - exact).abs())
        failures += bool((error > per_element).any())
    assert failures > 0


def test_a_row_left_out_of_389_is_wrong():
    x, g = reduction_case(389, 0)
    with pytest.raises(MismatchError, match=r"gradients\[1\]: \d+ of 128 elements differ beyond the allowance"):
        assert_close(weight_gradient(x, g, 16, rows_left_out=1), (x * g).sum(0), (x.double() * g.double()).sum(0),
                     what="gradients[1]")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_one_rounding_instead_of_two_passes(dtype):
    generator = torch.Generator().manual_seed(0)
    x, y = (torch.randn(4096, generator=generator).to(dtype) for _ in range(2))
    kernel = (x.float() * 3.1 + y.float()).to(dtype)
    torch_result = x * 3.1 + y
    assert (kernel != torch_result).any()  # the case is real: the two round differently somewhere
    assert_close(kernel, torch_result, x.double() * 3.1 + y.double())


def test_an_element_off_by_one_is_wrong():
    x = torch.randn(1000)
    shifted = x.clone()
    shifted[-1] = x[-2]
    with pytest.raises(MismatchError, match=r"output: 1 of 1000 elements differ beyond the allowance"):
        assert_close(shifted, x, x.double())


def test_the_message_names_the_rule():
    exact = torch.full((128,), 100.0, dtype=torch.float64)
    reference = (exact + torch.linspace(-1e-3, 1e-3, 128, dtype=torch.float64)).float()
    got = reference.clone()
    got[:3] += 1.0
    with pytest.raises(MismatchError) as raised:
        assert_close(got, reference, exact, what="gradients[1]")
    assert "gradients[1]: 3 of 128 elements differ beyond the allowance (max err 1" in str(raised.value)
    assert "= 4 x fp32 reference error 0.001" in str(raised.value)


def test_a_result_equal_to_pytorchs_is_never_wrong():
    """fp16 overflow: PyTorch's inf is 7e4 in float64; a kernel that overflows as PyTorch does is not wrong."""
    reference = torch.tensor([65504.0, 1.0], dtype=torch.float16) * 2
    assert_close(reference.clone(), reference, torch.tensor([131008.0, 2.0], dtype=torch.float64))


def test_without_a_float64_answer_the_dtype_default_judges():
    judged = {}
    assert_close(torch.ones(3) + 1e-7, torch.ones(3), None, judged=judged)
    assert "no float64 answer" in judged["output"]
    with pytest.raises(MismatchError, match="allowed 1.1e-05 = fp32 default"):
        assert_close(torch.ones(3) + 1e-3, torch.ones(3), None)


def test_an_override_replaces_the_default_for_its_dtype_and_output_and_is_recorded():
    loose = ToleranceOverride(rtol=0.0, atol=1e-2, dtype=torch.float32, output="gradients", reason="atomic adds")
    judged = {}
    got, reference = torch.ones(4) + 5e-3, torch.ones(4)
    assert_close([got], [reference], [reference.double()], what="gradients", overrides=(loose,), judged=judged)
    assert "override for fp32, gradients rtol=0 atol=0.01: atomic adds" in judged["gradients"]
    with pytest.raises(MismatchError):  # not for the output, and not for another dtype
        assert_close(got, reference, reference.double(), overrides=(loose,))
    with pytest.raises(MismatchError):
        assert_close([got.double()], [reference.double()], [reference.double()], what="gradients", overrides=(loose,))


def test_the_allowance_ignores_non_finite_reference_errors():
    reference = torch.tensor([float("inf"), 1.0])
    rule = allowance(reference, torch.tensor([1e300, 1.0], dtype=torch.float64), "output")
    assert rule.reference_error == 0.0


def test_a_spec_refuses_a_tolerance_that_is_not_overrides():
    with pytest.raises(ValueError, match="tolerance holds dict, not ToleranceOverride"):
        KernelSpec(name="k", kernels=(object(),), arguments=(("x", torch.Tensor),), launch=lambda w, x: x,
                   reference=lambda x: x, make_inputs=lambda s, d, g: (torch.ones(s),), tolerance=({"atol": 1},))


def row_by_row(terms: torch.Tensor, rows_per_program: int) -> torch.Tensor:
    """Each program adds its rows one after another in fp32 (a loop, not a tree), then torch sums the programs."""
    rows, columns = terms.shape
    padded = torch.cat([terms, terms.new_zeros(-rows % rows_per_program, columns)])
    steps = padded.view(-1, rows_per_program, columns)
    partial = torch.zeros(steps.shape[0], columns)
    for step in range(rows_per_program):
        partial = partial + steps[:, step]
    return partial.sum(0)


def test_a_row_by_row_sum_errs_beyond_factor_x_pytorch_and_the_reduction_term_passes_it():
    """One loop over all 8,192 rows, as Inductor's CPU reduction does: 18x PyTorch's cascaded sum's error."""
    x, g = reduction_case(8192, seed=0)
    reference, exact = (x * g).sum(0), (x.double() * g.double()).sum(0)
    got = row_by_row(x * g, rows_per_program=8192)
    assert (got.double() - exact).abs().max() > FACTOR * (reference.double() - exact).abs().max()
    with pytest.raises(MismatchError, match=r"differ beyond the allowance"):
        assert_close(got, reference, exact, what="gradients[1]")  # not told it is a reduction
    assert_close(got, reference, exact, what="gradients[1]", inputs_numel=x.numel())


def test_the_reduction_term_still_catches_a_row_left_out_of_389():
    x, g = reduction_case(389, seed=0)
    with pytest.raises(MismatchError, match=r"= 2 x sqrt\(K=389\) x eps x max\|exact\|"):
        assert_close(row_by_row(x[:-1] * g[:-1], 64), (x * g).sum(0), (x.double() * g.double()).sum(0),
                     what="gradients[1]", inputs_numel=x.numel())


def test_a_reference_that_upcasts_to_fp32_on_purpose_still_gives_a_float64_answer():
    """Norm references compute in fp32 (`x.float()`); their float64 run must not fall back to fp32 silently,
    or PyTorch's own fp32 error reads as 0 and a compiled reduction's rounding reads as a bug."""
    from harness.domain.tolerance import float64_everywhere

    def reference(x):
        wide = x.float()
        return (wide * torch.rsqrt(wide.pow(2).mean(dim=-1, keepdim=True) + 1e-6)).to(x.dtype)

    x = torch.randn(64, 100, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    plain = reference(x)
    with float64_everywhere():
        kept = reference(x)
    assert plain.dtype == kept.dtype == torch.float64
    exact = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    assert torch.equal(kept, exact) and not torch.equal(plain, exact)
