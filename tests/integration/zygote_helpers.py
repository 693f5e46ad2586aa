"""What the end-to-end zygote tests (test_loader_zygote, test_worker_start, test_zygote_ahead) give the temporary
folders of their own they run under, what they read from a run and check after it, and the rows of a `harness bench`
table (test_bench, test_worker_start)."""

import json
import subprocess
import tempfile
from pathlib import Path

import torch
from torch._inductor.runtime.cache_dir_utils import default_cache_dir

from harness.run.bytecode import default_prefix
from harness.run.caches import isa_probes_folder, seed_isa_probes


def cells_of(path: Path) -> dict[str, dict]:
    """A results file's cell records by cell id."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return {record["id"]: record for record in records if record["record"] == "cell"}


def assert_no_zygote_left(own_tmp: Path) -> None:
    """The runs made under TMPDIR=own_tmp left neither their zygote's folder nor the zygote itself."""
    assert not list(own_tmp.glob("tcm-loader-*")), "the run left its zygote's folder behind"
    leftover = subprocess.run(["pgrep", "-f", f"harness.run.startup.loader_zygote {own_tmp}"], capture_output=True, text=True)
    assert leftover.stdout == "", "the run left its zygote running"


def table_rows(table: str) -> dict[tuple[str, str], list[str]]:
    """A bench table's rows by (mode, workers), each as its cells."""
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("|") and cells[0] in ("process", "worker"):
            rows[(cells[0], cells[1])] = cells
    return rows


def _under(own_tmp: Path, path: Path) -> Path:
    """Where `path`, under this process's temporary folder, is for a Python started with TMPDIR=own_tmp."""
    return own_tmp / path.relative_to(tempfile.gettempdir())


def _link_under(own_tmp: Path, machine: Path) -> Path:
    """A link, where `machine` (a folder under this process's temporary folder) is for a Python started with
    TMPDIR=own_tmp, to `machine` itself, made if it was not there. The link."""
    machine.mkdir(parents=True, exist_ok=True)
    link = _under(own_tmp, machine)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(machine, target_is_directory=True)
    return link


def seed_kept_isa_probes(own_tmp: Path, *inductor_caches: Path) -> int:
    """Give the runs made under TMPDIR=own_tmp, and the Inductor cache folders named, the CPU ISA probe's outputs
    that this machine's runs kept (in this process's temporary folder), as on a machine that ran before: a test's
    folders of its own otherwise make each run's zygote, and each new Python that builds or loads a package, compile
    the probe again (docs/maintainers.md, "The harness's own tests"), which these tests do not ask about (the
    warm-up test of test_loader_zygote.py does). Torch still loads each output in a child Python before it trusts
    it. How many outputs were copied."""
    kept = isa_probes_folder(torch.__version__)  # under this process's temporary folder
    targets = [_under(own_tmp, kept), *inductor_caches]
    return sum(seed_isa_probes(kept, target) for target in targets)


def share_precompiled_headers(own_tmp: Path) -> Path:
    """Make Inductor's precompiled-header folder under TMPDIR=own_tmp a link to this machine's, which is under this
    process's temporary folder: torch keys that folder by the temporary folder a new Python starts with
    (`torch._inductor.codecache._HEADER_DIR`, under `default_cache_dir()`), so each new Python a test starts under
    a folder of its own otherwise precompiled the AOTInductor wrapper's and the C++ kernels' headers again, about
    7 CPU seconds each (docs/maintainers.md, "The harness's own tests"), which these tests do not ask about. The
    headers' file locks are in that folder too, so two builds of one header still wait for each other. The link."""
    return _link_under(own_tmp, Path(default_cache_dir()) / "precompiled_headers")


def share_bytecode_cache(own_tmp: Path) -> Path:
    """Make the bytecode cache that runs under TMPDIR=own_tmp keep (harness.run.bytecode: where the environment forbids
    bytecode, under the temporary folder) a link to this machine's: otherwise every Python those runs start compiles
    the modules of torch, Dynamo and Inductor from source again, the first ones side by side, which these tests do not
    ask about. Bytecode changes no result (Python checks each file against its source), and importlib writes each
    file atomically. The link."""
    return _link_under(own_tmp, default_prefix())
