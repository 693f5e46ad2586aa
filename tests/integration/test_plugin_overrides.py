"""A plug-in that replaces a kernel of an existing operator at import is refused with one line (exit 2): the `native`
control would otherwise run the plug-in's code, not PyTorch's. One that defines operators of its own loads."""

import subprocess
import sys
from pathlib import Path

from harness_commands import harness_command

from harness.domain.operator_overrides import overrides
from harness.domain.registry import load_specs

PLUGINS = Path(__file__).resolve().parent / "plugins"
REPO = PLUGINS.parents[2]


def test_a_plugin_overriding_aten_at_import_is_refused_with_one_line():
    command = ["run", "--tier", "cpu", "--kernels-from",
               str(PLUGINS / "aten_override_kernels.py"), "-p", "eager", "-o", "/dev/null/never.jsonl"]
    completed = harness_command(command, timeout=300)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    lines = [line for line in completed.stderr.splitlines() if line.startswith("error:")]  # torch warns of the override too
    assert len(lines) == 1 and "aten_override_kernels.py: registers kernels over existing operators" in lines[0]
    assert "aten/add.Tensor/CPU" in lines[0] and "native control" in lines[0]


def test_the_refusal_holds_on_every_load_not_only_the_first():
    """In a Python of its own: the plug-in's import replaces aten's add in the process that loads it, which would
    break every later test of this pytest worker (measured: `torch.add` returned zeros in the tests after it)."""
    code = ("import sys\nfrom harness.domain.registry import KernelSourceError, load_specs\n"
            "for _ in range(2):\n"
            "    try:\n        load_specs([sys.argv[1]], builtin=False, entry_points=False)\n"
            "    except KernelSourceError as exc:\n        print('refused:', exc)\n")
    completed = subprocess.run([sys.executable, "-c", code, str(PLUGINS / "aten_override_kernels.py")], cwd=REPO,
                               capture_output=True, text=True, timeout=300)
    refusals = [line for line in completed.stdout.splitlines() if line.startswith("refused:")]
    assert len(refusals) == 2 and all("aten/add.Tensor/CPU" in line for line in refusals), completed.stdout + completed.stderr


def test_a_plugin_defining_its_own_operator_loads():
    assert "own_operator_add" in load_specs([str(PLUGINS / "own_operator_kernels.py")], builtin=False, entry_points=False)


def test_an_operator_defined_with_its_kernels_is_no_override():
    before = frozenset({"aten/add.Tensor/CUDA"})
    lazily_defined = before | {"prims::_low_memory_pool", "prims/_low_memory_pool/Meta"}
    assert overrides(before, lazily_defined) == []
    assert overrides(before, before | {"aten/silu/CUDA"}) == ["aten/silu/CUDA"]
    assert overrides(before | {"mylib::op"}, before | {"mylib::op", "mylib/op/CUDA"}) == ["mylib/op/CUDA"]
