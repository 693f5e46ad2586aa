"""`--reuse`: an unchanged kernel library's cells are copied from the earlier run, never run again; an edit to a
kernel's source, to a helper module its code imports, or to torch's version (faked in the earlier file's header)
runs the cells it can change again, and only those (CPU tier, through the real CLI)."""

import json

import pytest
from harness_commands import harness_command

from harness.results import REUSE_INPUTS, REUSED_FROM, read_results

pytestmark = pytest.mark.slow

KERNELS = ("reuse_scale", "reuse_shift")
HELPER = "FACTOR = 3\n\n\ndef factor():\n    return FACTOR\n"
KERNEL = '''
import torch
import triton
import triton.language as tl

{imports}


@triton.jit
def {name}_kernel(x_ptr, out_ptr, n_elements, value, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) {operator} value, mask=mask)


def launch(wrap, x):
    out = torch.empty_like(x)
    wrap({name}_kernel)[(triton.cdiv(out.numel(), 256),)](x, out, out.numel(), {value}, BLOCK_SIZE=256)
    return out
'''
SPECS = '''
import sys
from pathlib import Path

import torch

from harness.domain.spec import KernelSpec

sys.path.insert(0, str(Path(__file__).parent))  # the library beside it: every process that loads this file finds it
from reuselib import scale, shift  # noqa: E402


def make_inputs(size, device, generator):
    return (torch.randn(size, generator=generator).to(device),)


SCALE = KernelSpec(name="reuse_scale", kernels=(scale.scale_kernel,), arguments=(("x", torch.Tensor),),
                   launch=scale.launch, reference=lambda x: x * 3, make_inputs=make_inputs)
SHIFT = KernelSpec(name="reuse_shift", kernels=(shift.shift_kernel,), arguments=(("x", torch.Tensor),),
                   launch=shift.launch, reference=lambda x: x + 2, make_inputs=make_inputs)
'''


def write_library(root):
    """reuselib/: `scale` uses the helper module, `shift` does not; specs.py names both (a library's spec module)."""
    package = root / "reuselib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text(HELPER)
    (package / "scale.py").write_text(KERNEL.format(name="scale", imports="from reuselib.helper import factor",
                                                    operator="*", value="factor()"))
    (package / "shift.py").write_text(KERNEL.format(name="shift", imports="", operator="+", value="2"))
    (root / "specs.py").write_text(SPECS)
    return root


def run(root, output, *extra):
    command = ["run", "--tier", "cpu", "--kernels-from", str(root / "specs.py"), "-s", "native,raw", "-p", "eager",
               "-n", "1", "-o", str(output), "--baseline-dir", "none", *extra]
    completed = harness_command(command, timeout=900)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed.stdout, read_results(output)


def ran(results):
    """The kernels whose cells this run ran (the rest it copied)."""
    return sorted({cell.kernel for cell in results.cells if REUSED_FROM not in cell.detail})


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    root = write_library(tmp_path_factory.mktemp("reuse"))
    _, first = run(root, root / "first.jsonl")
    assert ran(first) == list(KERNELS) and len(first.cells) == 4
    assert all(cell.outcome == "pass" for cell in first.cells), [(c.id, c.outcome, c.error) for c in first.cells]
    return root


def test_an_unchanged_library_reuses_every_cell_with_its_outcome(library):
    stdout, second = run(library, library / "second.jsonl", "--reuse", str(library / "first.jsonl"))
    first = read_results(library / "first.jsonl")
    assert ran(second) == []
    assert "reuse: 4 of 4 cells reused" in stdout
    assert "reused: 4 of 4 cells" in (library / "second.md").read_text()
    assert {c.id: (c.outcome, c.detail["reuse_key"]) for c in second.cells} == \
        {c.id: (c.outcome, c.detail["reuse_key"]) for c in first.cells}
    assert {c.detail[REUSED_FROM]["file"] for c in second.cells} == {str(library / "first.jsonl")}


def test_edits_rerun_the_cells_they_can_change_and_only_those(library):
    previous = library / "first.jsonl"
    helper = library / "reuselib" / "helper.py"
    helper.write_text(HELPER + "\n# a comment: a change to the source all the same\n")
    _, after_helper = run(library, library / "helper.jsonl", "--reuse", str(previous))
    assert ran(after_helper) == ["reuse_scale"]  # scale's code imports the helper; shift's does not

    shift = library / "reuselib" / "shift.py"
    shift.write_text(shift.read_text() + "\n# edited\n")
    _, after_kernel = run(library, library / "kernel.jsonl", "--reuse", str(library / "helper.jsonl"))
    assert ran(after_kernel) == ["reuse_shift"]
    assert all(cell.outcome == "pass" for cell in after_kernel.cells)

    faked = library / "faked-torch.jsonl"  # the same run, as if recorded with another torch
    lines = (library / "kernel.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header[REUSE_INPUTS]["environment"]["torch"] = "2.0.0"
    faked.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    stdout, after_torch = run(library, library / "torch.jsonl", "--reuse", str(faked))
    assert ran(after_torch) == list(KERNELS)
    assert "torch '2.0.0' -> " in stdout


def test_a_file_without_keys_reuses_nothing_and_a_missing_one_is_one_line_exit_2(library, tmp_path):
    old = tmp_path / "old.jsonl"
    lines = (library / "first.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    del header[REUSE_INPUTS]  # a file from a harness before --reuse
    old.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    stdout, results = run(library, tmp_path / "new.jsonl", "--reuse", str(old))
    assert ran(results) == list(KERNELS) and "reuse: 0 of 4" in stdout

    missing = tmp_path / "missing.jsonl"
    completed = harness_command(["run", "--tier", "cpu", "--kernels-from", str(library / "specs.py"), "-p", "eager",
                                 "-o", str(tmp_path / "x.jsonl"), "--reuse", str(missing)], timeout=900)
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines()[-1].endswith(f"{missing}: --reuse names no results file")
