"""aoti_fresh_process judges an in-place kernel by what the package wrote, in the loader's process.

Before the loader sent its arguments back, the native control of every in-place kernel was
`wrong` there (the parent's inputs never changed), and every style was blamed on the environment.
"""

import pytest

from harness.run.cell import CellRequest
from harness.run.environment import resolve_tier
from harness.run.isolation import run_isolated

pytestmark = pytest.mark.slow


def test_an_in_place_native_control_passes_in_a_fresh_process():
    result = run_isolated(CellRequest("add_inplace", "native", "aoti_fresh_process", tier=resolve_tier("auto")), 600,
                          mode="process")
    assert result.outcome == "pass", result
