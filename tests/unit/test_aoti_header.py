"""The header a run's zygote builds ahead (harness.run.startup.aoti_header) is the one a real AOTInductor build uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# A real build, its precompiled headers recorded, after the header was built ahead as the zygote builds it.
SCRIPT = """
import json, sys
import torch
from torch._inductor import codecache
from harness.run.startup.aoti_header import build_header

ahead = build_header("cpu")
used = []
original = codecache._precompile_header

def recording(header, hashable_cmd_line, **compile_command):
    path = original(header, hashable_cmd_line, **compile_command)
    used.append([header, path])
    return path

codecache._precompile_header = recording

class Sine(torch.nn.Module):
    def forward(self, x):
        return x.sin() + 1

program = torch.export.export(Sine(), (torch.randn(8),))
torch._inductor.aoti_compile_and_package(program, package_path=sys.argv[1])
print(json.dumps({"ahead": ahead, "used": used, "wrapper": codecache._get_cpp_wrapper_header("cpu", aot_mode=True)}))
"""


@pytest.mark.slow
def test_a_real_build_uses_the_header_built_ahead(tmp_path):
    """On the CPU (the recipe is the same for CUDA but for the device): the wrapper header a build precompiles is
    the file built ahead, its path a digest of the command line and the preprocessed header."""
    completed = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "sine.pt2")], cwd=REPO,
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    seen = json.loads(completed.stdout.splitlines()[-1])
    wrapper_builds = [path for header, path in seen["used"] if header == seen["wrapper"]]
    assert wrapper_builds == [seen["ahead"]], seen
    assert Path(seen["ahead"] + ".gch").exists()  # the precompiled header itself, beside the header it includes
