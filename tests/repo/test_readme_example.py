"""The KernelSpec example in the README is real: it loads with --kernels-from and passes eager in every style."""

import re
from pathlib import Path

import pytest

from harness.domain.registry import load_specs
from harness.run.cell import CellRequest
from harness.run.environment import resolve_tier
from harness.run.isolation import run_inline
from harness.vocab import STYLES

README = Path(__file__).resolve().parents[2] / "README.md"
pytestmark = pytest.mark.slow  # runs the examples' cells in this process


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    code = re.search(r"## Your kernel, as a KernelSpec.*?```python\n(.*?)```", README.read_text(), re.S).group(1)
    path = tmp_path_factory.mktemp("readme") / "my_kernels.py"
    path.write_text(code)
    return str(path)


def test_the_example_defines_my_add(example):
    assert "my_add" in load_specs([example])


@pytest.mark.parametrize("style", STYLES)
def test_the_example_runs_in_eager(example, style):
    result = run_inline(CellRequest("my_add", style, "eager", tier=resolve_tier("auto"), kernels_from=[example]))
    assert result.outcome == "pass", result


@pytest.fixture(scope="module")
def liger_example(tmp_path_factory):
    pytest.importorskip("liger_kernel", reason="nox -s tests installs liger-kernel; a bare checkout may not have it")
    code = re.search(r"### A kernel from a library you already use.*?```python\n(.*?)```", README.read_text(), re.S).group(1)
    path = tmp_path_factory.mktemp("readme") / "liger_specs.py"
    path.write_text(code + LIGER_SWEEP_BOUND)
    return str(path)


# The README's spec as written, its `eager_inputs` sweep bounded to LIGER_MAX_ROWS rows. The kernels launch one program
# per row over a fixed 96 columns (their one block), so past a couple of rows a longer input asks nothing new of the
# launch, the dtypes or the strided views the spec claims; the unbounded sweep (up to 4 x 1,537 rows, 4,097 in an
# explicit case, in three dtypes) took 24 CPU seconds in Triton's interpreter, the bounded one a second or two.
LIGER_MAX_ROWS = 257
LIGER_SWEEP_BOUND = f"\nimport dataclasses\nSPEC = dataclasses.replace(SPEC, max_size={LIGER_MAX_ROWS})\n"


LIGER_CELLS = [(style, "eager") for style in STYLES] + [
    ("raw", "eager_backward"), ("autograd_function", "eager_backward"), ("triton_op", "eager_backward"),
    ("triton_op", "eager_inputs")]


@pytest.mark.parametrize("style, pipeline", LIGER_CELLS)
def test_the_liger_example_runs(liger_example, style, pipeline):
    result = run_inline(CellRequest("liger_relu_squared", style, pipeline, tier=resolve_tier("auto"),
                                    kernels_from=[liger_example]))
    if style == "raw" and pipeline == "eager_backward":  # a raw launch has no autograd: the cell must say so
        assert result.outcome == "fail" and "does not require grad" in result.error, result
    else:
        assert result.outcome == "pass", result
