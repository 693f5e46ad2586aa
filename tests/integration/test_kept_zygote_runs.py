"""Runs started one after another share a kept zygote (TCM_KEEP_ZYGOTE, harness.run.kept_zygote), as this suite's
own runs do: the second run forks its workers from the zygote the first started, pays no warm-up, and says so in its
header; the zygote outlives the runs, in the folder of its key and owner. That a kept zygote gives the same verdicts
is what the rest of the suite checks, each run against its expected outcomes."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from zygote_helpers import cells_of

from harness.run import loader_zygote
from harness.run.kept_zygote import KEEP_ZYGOTE_VARIABLE, OWNER_VARIABLE

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _run(output: Path, environment: dict[str, str]) -> dict:
    completed = subprocess.run([sys.executable, "-m", "harness", "run", "--tier", "cpu", "-k", "add", "-s", "custom_op",
                                "-p", "eager", "-n", "1", "-o", str(output)],
                               cwd=REPO, capture_output=True, text=True, timeout=600, env=environment)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return json.loads(output.read_text().splitlines()[0])


def test_the_second_run_forks_its_workers_from_the_zygote_the_first_started(tmp_path):
    folder = Path(tempfile.mkdtemp(prefix="kz-", dir="/tmp"))  # short: the zygote's socket path must fit AF_UNIX's
    environment = {**os.environ, KEEP_ZYGOTE_VARIABLE: str(folder), OWNER_VARIABLE: str(os.getpid())}
    try:
        first = _run(tmp_path / "first.jsonl", environment)
        assert first["zygote_kept"] is True and first["zygote_warmup_s"] > 0, "the first run started it: its warm-up"
        [zygote_folder] = [path for path in folder.iterdir() if path.is_dir()]
        assert zygote_folder.name.endswith(f"-{os.getpid()}"), "one folder per key and owner"
        pid = int((zygote_folder / loader_zygote.PID_FILE).read_text())
        assert loader_zygote._alive(pid), "the first run left it running for the next"
        second = _run(tmp_path / "second.jsonl", environment)
        assert second["zygote_kept"] is True and second["zygote_warmup_s"] == 0.0
        assert int((zygote_folder / loader_zygote.PID_FILE).read_text()) == pid
        assert (zygote_folder / loader_zygote.LOG).read_text().count(" ready: ") == 1, "warmed up once"
        assert [record["outcome"] for record in cells_of(tmp_path / "second.jsonl").values()] == ["pass"]
    finally:
        for zygote_folder in folder.iterdir():
            loader_zygote.stop(zygote_folder)
        shutil.rmtree(folder, ignore_errors=True)
