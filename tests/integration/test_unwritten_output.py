"""No pass by luck: a kernel that never writes its output is `wrong` wherever its twin that writes passes, with the
evidence that the output still holds the poison (harness.domain.poison), through the real CLI on the CPU tier.

Before the poison, the memory an unwritten output got back could hold the reference's answer, computed just before:
on an H200, such a kernel passed 14 of 30 cells, the same 14 in two runs, and `liger_rms_norm/wrap_triton/
flop_counter` (FlopCounterMode never launches a bare wrap_triton kernel) passed or not by what the block held last.
"""

from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.results import read_results

PLUGIN = Path(__file__).parent / "plugins" / "unwritten_output_kernels.py"
# AOTInductor is left to the GPU run (docs/benchmarks.md): its C++ builds are the costliest cells here, and the
# fresh-process loader's poison is asked by export_roundtrip.
PIPELINES = ("eager", "compile", "compile_fullgraph", "export_strict", "export_nonstrict", "export_roundtrip",
             "flop_counter")
EVIDENCE = "the output was never written (it still holds the poison value)"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    output = tmp_path_factory.mktemp("unwritten") / "results.jsonl"
    completed = harness_command(["run", "--tier", "cpu", "--kernels-from", str(PLUGIN), "-p", ",".join(PIPELINES),
                                 "-o", str(output), "--baseline-dir", "none"], timeout=900)
    assert completed.returncode in (0, 1), completed.stdout[-3000:] + completed.stderr[-3000:]
    return {(cell.kernel, cell.style, cell.pipeline): cell for cell in read_results(output).cells}


def test_an_unwritten_output_never_passes_where_the_control_is_not_asked(outcomes):
    passed = [cell.id for (kernel, style, _), cell in outcomes.items()
              if kernel == "never_writes" and style != "native" and cell.outcome == "pass"]
    assert passed == []


def test_it_is_wrong_with_its_evidence_wherever_the_kernel_that_writes_passes(outcomes):
    compared = {pipeline: 0 for pipeline in PIPELINES}
    for (kernel, style, pipeline), cell in outcomes.items():
        if kernel != "writes_output" or style == "native" or cell.outcome != "pass":
            continue
        twin = outcomes[("never_writes", style, pipeline)]
        assert twin.outcome == "wrong", (twin.id, twin.outcome, twin.error)
        assert EVIDENCE in twin.error, twin.error
        compared[pipeline] += 1
    assert all(compared.values()), compared  # every pipeline asked has a style that runs there on this tier


def test_the_control_of_the_unwritten_kernel_is_its_reference_and_passes(outcomes):
    assert {outcomes[("never_writes", "native", pipeline)].outcome for pipeline in PIPELINES} == {"pass"}
