"""The environment a results header records: the cores a run may use, and the GPUs CUDA may see."""

import os
import subprocess
import sys

import pytest

CODE = "import json; from harness.environment import describe; print(json.dumps(describe('cpu')))"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity (Linux)")
def test_cpu_count_is_the_cores_the_run_may_use_not_the_machines():
    one_core = sorted(os.sched_getaffinity(0))[:1]
    completed = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120,
                               preexec_fn=lambda: os.sched_setaffinity(0, one_core),
                               env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"})
    import json

    environment = json.loads(completed.stdout.strip().splitlines()[-1])
    assert environment["cpu_count"] == 1
    assert environment["cuda_visible_devices"] == "0"
