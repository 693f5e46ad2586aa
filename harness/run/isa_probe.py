"""Inductor's CPU ISA probe, run in a child of the zygote while the zygote already forks workers.

Why: `pick_vec_isa` (which every AOTInductor build and load, and every CPU compile, asks first) tries each candidate
ISA with a C++ compile and a child Python; on torch 2.11 that child imports torch. On a fresh H100 the probe was
most of the zygote's warm-up, and no worker could start before it ended (docs/maintainers.md, "Isolation").

Now the zygote forks a prober (`start_beside`) and goes on; the prober probes every candidate at once and writes the
answers to a file. Each candidate's `check_build`, in the zygote, is replaced by one that waits for that file and
returns the prober's answer for it, so a process forked before the answer came (a worker that starts with eager
cells) waits only when it first needs the answer, and gets the same one without probing again; the zygote reads
the answer itself as soon as it is there (`settle`), and what it forks after that inherits it, as before.
Where the prober answers nothing for a candidate (it died, or the candidate was not asked), `check_build` probes
as torch would.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.run.caches import isa_probes_folder, keep_isa_probes, probe_outputs, seed_isa_probes

ANSWER_FILE = "isa-probe.json"  # in the zygote's folder: {candidate: valid}, and when the probe started and ended
WAIT_LIMIT_S = 600.0  # past it, a process that waits for the answer probes itself
POLL_S = 0.05


def candidates() -> list[Any]:
    """The candidates `valid_vec_isa_list` would try on this CPU; empty where that cannot be told (another
    architecture, another torch): there nothing is asked ahead and `pick_vec_isa` probes as it always did."""
    import platform

    try:
        from torch._inductor import cpu_vec_isa

        if sys.platform != "linux" or platform.machine() != "x86_64":
            return []
        flags = cpu_vec_isa.x86_isa_checker()
        found = [isa for isa in cpu_vec_isa.supported_vec_isa_list if all(flag in flags for flag in str(isa).split())]
        # what the deferral replaces and compares (`_defer`): where a torch lacks either, nothing is asked ahead
        deferrable = all(callable(getattr(isa, "check_build", None)) and hasattr(isa, "_avx_code") for isa in found)
        return found if deferrable else []
    except (ImportError, AttributeError):
        return []


@contextlib.contextmanager
def probe_at_once() -> Iterator[None]:
    """Inductor's ISA probe, each candidate in a thread of its own, while the body runs; joined at the end.

    `pick_vec_isa` tries the candidates one after another, each a C++ compile and a child Python; asked at once they
    take a third of that time with the same answer (docs/maintainers.md, "Isolation"). Each answer is cached on its
    candidate, so `pick_vec_isa` only reads them."""
    asked = candidates()
    if not asked:
        yield
        return
    with concurrent.futures.ThreadPoolExecutor(len(asked), thread_name_prefix="isa-probe") as pool:
        for candidate in asked:
            pool.submit(bool, candidate)
        yield


def warm_cpu_isa() -> None:
    """The probe, its candidates compiled at once: what a process about to build with AOTInductor pays first
    (`harness perf` asks it before timing a first call). Cached per process."""
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    with probe_at_once():
        pass
    pick_vec_isa()


def start_beside(directory: Path, inherited: list[socket.socket]) -> int | None:
    """Fork the prober, and make this process's candidates wait for its answer; the prober's pid. The prober closes
    `inherited` (the zygote's sockets) and leads a process group of its own, which the zygote ends as it leaves.

    None where no candidate can be told: then the probe runs here and now, as before."""
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    asked = candidates()
    if not asked:
        pick_vec_isa()
        return None
    answer = directory / ANSWER_FILE
    started = time.time()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setpgid(0, 0)
            for other in inherited:
                other.close()
            code = _probe(asked, answer, started)
        except BaseException:  # noqa: B036  (whatever happens, the prober must not return into the zygote's code)
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    for candidate in asked:
        _defer(candidate, answer)
    return pid


def _probe(asked: list[Any], answer: Path, started: float) -> int:
    """In the prober: the kept outputs seeded into the zygote's Inductor cache, every candidate probed at once, the
    new outputs kept for the next run, the answers written."""
    import torch
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    kept = isa_probes_folder(torch.__version__)
    inductor_cache = Path(cache_dir())  # TORCHINDUCTOR_CACHE_DIR: the controller's, in the run's folder
    seed_isa_probes(kept, inductor_cache)
    before = probe_outputs(inductor_cache)
    with concurrent.futures.ThreadPoolExecutor(len(asked), thread_name_prefix="isa-probe") as pool:
        valid = dict(zip((str(isa) for isa in asked), pool.map(bool, asked), strict=True))
    keep_isa_probes(inductor_cache, kept, before)
    write_text_atomic(answer, json.dumps({"valid": valid, "started_at": round(started, 3),
                                          "answered_at": round(time.time(), 3)}))
    return 0


def _defer(candidate: Any, answer: Path) -> None:
    """Replace the candidate's `check_build` (on the instance) by one that returns the prober's answer for the probe's
    own code; torch caches what `check_build` returned on the candidate (`VecISA.__bool__`)."""
    probe_code = candidate._avx_code
    build = candidate.check_build

    def check_build(code: str) -> bool:
        if code == probe_code:
            valid = read_answer(answer, wait_s=WAIT_LIMIT_S).get(str(candidate))
            if valid is not None:
                return bool(valid)
        return build(code)

    candidate.check_build = check_build


def read_answer(answer: Path, wait_s: float = 0.0) -> dict[str, bool]:
    """The prober's answers by candidate, waiting up to `wait_s` for them; empty when none came (`give_up`)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return dict(json.loads(answer.read_text())["valid"])
        except (OSError, ValueError, KeyError, TypeError):
            if time.monotonic() >= deadline:
                return {}
            time.sleep(POLL_S)


def answered(directory: Path) -> bool:
    return (directory / ANSWER_FILE).exists()


def settle() -> None:
    """In the zygote, once the answer is there: read it into torch's caches, so that every process forked from now
    on inherits it."""
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    pick_vec_isa()


def give_up(directory: Path) -> None:
    """The prober ended without an answer: say so in the file, so that no process waits for one; each then probes
    as torch would."""
    if not answered(directory):
        write_text_atomic(directory / ANSWER_FILE, json.dumps({"valid": {}, "answered_at": round(time.time(), 3)}))


def probe_times(directory: Path) -> dict[str, float] | None:
    """When the prober started and answered (time.time()), or None before it has."""
    try:
        recorded = json.loads((directory / ANSWER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return {key: recorded[key] for key in ("started_at", "answered_at") if key in recorded}
