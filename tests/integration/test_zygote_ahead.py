"""`harness run` starts its zygote before it loads the kernels (harness.run.startup.zygote_ahead), and the run adopts it.

The kernels' plug-in below looks, as the controller imports it, for a zygote that this very process owns: one must
be warming up already. A run that stops before pytest (a spec whose make_inputs raises) leaves neither its zygote,
its zygote's folder nor its cache folder behind.
"""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from harness_commands import harness_command
from zygote_helpers import assert_no_zygote_left, cells_of, seed_kept_isa_probes

REPO = Path(__file__).resolve().parents[2]
LIBRARY = REPO / "tests" / "fixtures" / "kernel_library" / "library_kernels.py"
LOG_VARIABLE = "TCM_TEST_AHEAD_LOG"

# Imported by the controller as it loads the kernels, and by each worker: each writes its pid and the zygotes it owns.
PLUGIN = f'''
import json, os, sys
from pathlib import Path

sys.path.insert(0, {str(LIBRARY.parent)!r})
from library_kernels import SPEC  # noqa: E402,F401


def _zygotes_owned_by(pid):
    found = []
    for entry in Path("/proc").iterdir():
        try:
            arguments = (entry / "cmdline").read_bytes().decode(errors="replace").split("\\0")
        except OSError:
            continue
        if "harness.run.startup.loader_zygote" in arguments:
            after = arguments[arguments.index("harness.run.startup.loader_zygote") + 1:]
            if len(after) >= 2 and after[1] == str(pid):
                found.append(after[0])
    return found


with open(os.environ[{LOG_VARIABLE!r}], "a") as log:
    log.write(json.dumps({{"pid": os.getpid(), "zygotes": _zygotes_owned_by(os.getpid())}}) + "\\n")
'''


@pytest.fixture
def own_tmp():
    folder = Path(tempfile.mkdtemp(prefix="tza-"))  # short: the zygote's socket path must fit AF_UNIX's limit
    seed_kept_isa_probes(folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _run(plugin: Path, own_tmp: Path, log: Path, *extra: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "TMPDIR": str(own_tmp), LOG_VARIABLE: str(log)}
    environment.pop("TCM_KEEP_CACHES", None)  # the run's own cache folder, which it must remove
    return harness_command(["run", "--tier", "cpu", "--kernels-from", str(plugin), "-s", "native", "-p", "eager",
                            "-n", "1", "--baseline-dir", "none", *extra], env=environment, timeout=600)


def _zygotes_seen_by_the_controller(log: Path) -> list[str]:
    """The controller imports the plug-in first: its workers start only once its zygote has warmed up."""
    return json.loads(log.read_text().splitlines()[0])["zygotes"]


def test_the_zygote_is_warming_up_before_the_kernels_load_and_the_run_forks_its_workers_from_it(tmp_path, own_tmp):
    plugin = tmp_path / "ahead_kernels.py"
    plugin.write_text(PLUGIN)
    log, output = tmp_path / "imports.jsonl", tmp_path / "run.jsonl"
    completed = _run(plugin, own_tmp, log, "-o", str(output))
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    seen = _zygotes_seen_by_the_controller(log)
    assert len(seen) == 1, f"the controller found no zygote of its own as it loaded the kernels: {seen}"
    header = json.loads(output.read_text().splitlines()[0])
    assert header["worker_start"] == "zygote"
    assert header["zygote_ready_at"] - header["zygote_warmup_s"] < header["started_at"]  # begun before the run
    assert {record["detail"]["worker_start"] for record in cells_of(output).values()} == {"zygote"}
    assert_no_zygote_left(own_tmp)
    assert not list((own_tmp / f"tcm-caches-{os.getuid()}").glob("run-*")), "the run left its cache folder"


def test_a_run_that_stops_before_pytest_leaves_no_zygote_and_no_folder(tmp_path, own_tmp):
    plugin = tmp_path / "broken_inputs_kernels.py"
    plugin.write_text(PLUGIN + '''
import dataclasses


def _no_inputs(*args):
    raise ValueError("no inputs today")


SPEC = dataclasses.replace(SPEC, make_inputs=_no_inputs)
''')
    log = tmp_path / "imports.jsonl"
    completed = _run(plugin, own_tmp, log, "-o", str(tmp_path / "run.jsonl"))
    assert completed.returncode == 2, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "no inputs today" in completed.stdout + completed.stderr
    assert _zygotes_seen_by_the_controller(log), "no zygote was warming up as the kernels loaded"  # one to stop
    assert_no_zygote_left(own_tmp)
    assert not list((own_tmp / f"tcm-caches-{os.getuid()}").glob("run-*")), "the run left its cache folder"
