"""One zygote for runs started one after another (TCM_KEEP_ZYGOTE=FOLDER), where they would otherwise each start one.

Why: a run's zygote imports torch, Dynamo and Inductor and probes the CPU before it forks the first worker; on two
cores that is about 7.5 of the 12 CPU seconds a one-cell run costs (docs/maintainers.md, "Isolation"). A zygote
forks and serves; it never runs a cell, imports a kernel module or touches CUDA, and each child it forks takes
its caller's environment before anything else. So a zygote started by an earlier run is the zygote a later run
would start, when everything it was started with is the same: the Python, the tier, the harness's own sources
(their sizes and modification times) and the environment. Everything in the environment counts but what differs
from run to run and nothing the zygote imports reads (PER_RUN_VARIABLES): the run's cache folder, its loader
folder, pytest's current test. Two runs that differ in anything else get zygotes of their own.

FOLDER holds one folder per such key and owner. The owner is the process TCM_KEEP_ZYGOTE_OWNER names, else the
parent of `harness run` (the shell that ran it; a wrapper such as `time` ends with each run, and so would the
zygote). A kept zygote leaves when its owner is gone, or after IDLE_S with no run asking (each one waiting holds
about 400 MB on the CPU tier; a run about to use it marks it, harness.run.loader_zygote.ensure_started). Opt-in: the
harness's own test suite sets both variables for each of its workers.

Where caches are a run's own (the default), the run's Inductor and Triton cache folders are in the environment,
so no two runs share a zygote: keeping one pays only with TCM_KEEP_CACHES (harness.run.caches), as in the suite.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.run.loader_zygote import IDLE_FILE

KEEP_ZYGOTE_VARIABLE = "TCM_KEEP_ZYGOTE"
OWNER_VARIABLE = "TCM_KEEP_ZYGOTE_OWNER"  # a pid: the kept zygote leaves when that process is gone
# Set per run, after or as the zygote starts, and read by no module the zygote imports: a run's cache folder
# (harness.run.caches; the zygote's own caches are named by TORCHINDUCTOR_CACHE_DIR, which counts), the run's loader
# folder and owner (harness.run.loader_zygote), and the test a suite worker is running when it starts the run.
PER_RUN_VARIABLES = frozenset({"TCM_RUN_CACHES", "TCM_LOADER_DIR", "TCM_LOADER_OWNER", "PYTEST_CURRENT_TEST"})
# What the zygote is asked with, not started with: its owner.
NOT_IN_KEY = PER_RUN_VARIABLES | {OWNER_VARIABLE}
KEY_CHARACTERS = 16
IDLE_S = 60.0
SOCKET_ROOM = len("/zygote.sock.") + 10  # what the zygote's socket path adds to its folder's (AF_UNIX: 107 bytes)
SOCKET_PATH_LIMIT = 107


@dataclass(frozen=True)
class KeptZygote:
    directory: Path  # the zygote's folder: its socket, pid file and log
    owner_pid: int  # it leaves when this process is gone


def kept_zygote(tier: str, environ: Mapping[str, str] | None = None) -> KeptZygote | None:
    """Where this run's kept zygote lives and who owns it, or None: not asked for, or FOLDER too long for a socket's
    path. An owner that is not a pid is refused in one line (ValueError)."""
    environ = os.environ if environ is None else environ
    folder = environ.get(KEEP_ZYGOTE_VARIABLE)
    if not folder:
        return None
    named = check_owner(environ)
    owner = named if named is not None else os.getppid()
    directory = Path(folder).absolute() / f"{zygote_key(tier, environ)}-{owner}"
    if len(str(directory)) + SOCKET_ROOM > SOCKET_PATH_LIMIT:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    (directory / IDLE_FILE).write_text(str(IDLE_S))
    return KeptZygote(directory, owner)


def check_owner(environ: Mapping[str, str] | None = None) -> int | None:
    """TCM_KEEP_ZYGOTE_OWNER as a pid, None when unset; ValueError (one line) when it is not a pid."""
    owner = (os.environ if environ is None else environ).get(OWNER_VARIABLE)
    if owner is None or owner == "":
        return None
    if not owner.isdigit():
        raise ValueError(f"{OWNER_VARIABLE}={owner!r}: expected the id of the process whose end ends the kept zygote")
    return int(owner)


def zygote_key(tier: str, environ: Mapping[str, str]) -> str:
    """A name for everything a zygote is started with: two runs with the same one may share it."""
    kept = sorted((name, value) for name, value in environ.items() if name not in NOT_IN_KEY)
    text = json.dumps([sys.executable, tier, kept, source_fingerprint()])
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_CHARACTERS]


def source_fingerprint() -> list[tuple[str, int, int]]:
    """The harness's own modules, each by its path, size and modification time: an edit makes a new zygote."""
    root = Path(__file__).resolve().parents[1]
    entries = []
    for path in sorted(root.rglob("*.py")):
        status = path.stat()
        entries.append((path.relative_to(root).as_posix(), status.st_size, status.st_mtime_ns))
    return entries
