"""Locations in the evidence name the user's code: Inductor's "Found from" stack, made from a real FX graph of a
style's call (CPU tier), names the spec's launch and not harness/domain/styles.py (harness.domain.user_code)."""

import inspect
from pathlib import Path

import pytest
import torch

from harness.domain.registry import load_specs
from harness.domain.styles import build_style
from harness.domain.user_code import in_user_code, launch_location

PLUGIN = Path(__file__).resolve().parent / "plugins" / "mutating_launch_kernels.py"
# As recorded on the H100 (reports/gpu-results.jsonl, add_inplace/raw/cudagraphs, before this change).
RECORDED = ('skipping cudagraphs due to mutated inputs (1 instances). Found from : \n'
            '   File "/work/main/harness/domain/styles.py", line 87, in <lambda>\n'
            '    lambda *args: visible_output(spec, spec.launch(identity_wrap, *args)))\n'
            '  File "/work/main/kernels/add_inplace.py", line 27, in launch\n'
            '    wrap(add_inplace_kernel)[grid_1d(n_elements)](x, y, n_elements, BLOCK_SIZE=BLOCK_SIZE)\n')


@pytest.fixture(scope="module")
def spec():
    return load_specs([str(PLUGIN)], builtin=False, entry_points=False)["mutating_launch"]


def inductor_reason(built, spec):
    """What Inductor says when it skips CUDA graphs for this call's mutated input, from the graph Dynamo made."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._inductor.cudagraph_utils import get_mutation_stack_trace, get_placeholder_info

    graphs = []

    def capture(gm, example_inputs):  # the functionalized graph Inductor is given, its input mutation a copy_
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    args = spec.make_inputs(8, torch.device("cpu"), torch.Generator().manual_seed(0))
    torch.compile(built.call, backend=aot_autograd(fw_compiler=capture), fullgraph=True)(*args)
    return get_mutation_stack_trace(get_placeholder_info(graphs[0].graph), [0])


def test_the_raw_call_names_the_harness_until_rewritten_then_the_launch_alone(spec):
    reason = inductor_reason(build_style(spec, "raw"), spec)
    assert "harness/domain/styles.py" in reason and str(PLUGIN) in reason  # what Inductor itself says
    rewritten = in_user_code(reason, spec)
    assert "harness/" not in rewritten and "<string>" not in rewritten
    assert f'File "{PLUGIN}", line {inspect.getsourcelines(spec.launch)[1] + 1}, in launch' in rewritten
    assert "x.add_(y)" in rewritten and rewritten.startswith("skipping cudagraphs due to mutated inputs")


def test_the_recorded_h100_reason_keeps_the_kernels_frame_only():
    here = str(Path(__import__("harness").__file__).resolve().parents[1])  # the H100's checkout was /work/main
    rewritten = in_user_code(RECORDED.replace("/work/main/harness/", f"{here}/harness/"), object())
    assert "styles.py" not in rewritten
    assert rewritten.endswith('  File "/work/main/kernels/add_inplace.py", line 27, in launch\n'
                              '    wrap(add_inplace_kernel)[grid_1d(n_elements)](x, y, n_elements, BLOCK_SIZE=BLOCK_SIZE)\n')


def test_a_stack_of_harness_frames_alone_becomes_the_specs_launch(spec):
    harness_only = ('mutated inputs. Found from : \n  File "<string>", line 2, in mutating_launch\n'
                    f'  File "{Path(__import__("harness").__file__).parent}/domain/styles.py", line 9, in <lambda>\n'
                    '    lambda *args: forward(*args)\n')
    assert in_user_code(harness_only, spec) == "mutated inputs. Found from : \n" + launch_location(spec)


def test_text_without_a_harness_frame_is_unchanged(spec):
    text = 'reason. Found from : \n  File "/lib/mine.py", line 3, in launch\n    x.add_(y)\n'
    assert in_user_code(text, spec) == text
    assert in_user_code("no stack here", spec) == "no stack here"
