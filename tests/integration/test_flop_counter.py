"""flop_counter counts the op's flops, never the reference's.

The reference is computed before FlopCounterMode starts: before that, a raw launch (which FlopCounterMode cannot
see) of `matmul` passed, because the mode counted the reference's own `aten.mm` (the published H100 results had
`matmul/raw/flop_counter` as pass), and after the tolerance model ran the reference twice it failed with twice the
formula's count.
"""

import pytest

from harness.run.cell import CellRequest
from harness.run.environment import resolve_tier
from harness.run.isolation import run_inline

pytestmark = pytest.mark.slow  # runs real cells in this process

TIER = resolve_tier("auto")


@pytest.mark.parametrize("style, outcome, counted", [("raw", "fail", 0), ("custom_op", "pass", 614400),
                                                     ("native", "pass", 614400)])
def test_the_count_is_the_ops_own(style, outcome, counted):
    result = run_inline(CellRequest("matmul", style, "flop_counter", TIER))
    assert result.outcome == outcome, result
    if outcome == "pass":
        assert result.detail["counted_flops"] == counted
    else:
        assert f"counted {counted} flops" in result.error
