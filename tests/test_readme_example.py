"""The KernelSpec example in the README is real: it loads with --kernels-from and passes eager in every style."""

import re
from pathlib import Path

import pytest

from harness.cell import CellRequest, run_inline
from harness.environment import resolve_tier
from harness.registry import load_specs

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    code = re.search(r"## Your kernel, as a KernelSpec.*?```python\n(.*?)```", README.read_text(), re.S).group(1)
    path = tmp_path_factory.mktemp("readme") / "my_kernels.py"
    path.write_text(code)
    return str(path)


def test_the_example_defines_my_add(example):
    assert "my_add" in load_specs([example])


@pytest.mark.parametrize("style", ["native", "raw", "autograd_function", "custom_op", "triton_op"])
def test_the_example_runs_in_eager(example, style):
    result = run_inline(CellRequest("my_add", style, "eager", tier=resolve_tier("auto"), kernels_from=[example]))
    assert result.outcome == "pass", result
