"""Probe Inductor's CPU vector ISAs once per run, so that no cell process probes them again.

Inductor (torch <= 2.11) decides which CPU ISAs its C++ code may use by compiling a test
library per ISA and loading it in a child Python that imports torch, once per process. An
AOTInductor cell on the H100 paid 30-40 s for it, and the fresh-process loader paid it
again (README, "Where a full GPU run's time goes"). `TORCHINDUCTOR_VEC_ISA_OK=1` makes
Inductor trust the CPU's flags instead. The harness sets it only after this module has
run Inductor's real probe in a fresh process and found that it accepts exactly the ISAs the
flags claim, so the setting changes no choice Inductor makes; a value the user set is kept.

Run as `python -m harness.vec_isa`: prints {"probed": [...], "assumed": [...]} as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

VARIABLE = "TORCHINDUCTOR_VEC_ISA_OK"
PROBE_TIMEOUT_S = 600


def probe() -> dict[str, list[str]]:
    """Inductor's ISA list as its probe finds it, then as the CPU's flags alone would give it."""
    from torch._inductor import config, cpu_vec_isa

    probed = [str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()]
    cpu_vec_isa.valid_vec_isa_list.cache_clear()
    config.cpp.vec_isa_ok = True
    assumed = [str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()]
    return {"probed": probed, "assumed": assumed}


def settle(environ: dict[str, str] | None = None) -> str:
    """Set TORCHINDUCTOR_VEC_ISA_OK=1 in `environ` when that is provably the probe's answer; say what was decided."""
    environ = os.environ if environ is None else environ
    if VARIABLE in environ:
        return f"{VARIABLE}={environ[VARIABLE]} kept as set"
    child_env = {k: v for k, v in environ.items() if k != VARIABLE}
    try:
        completed = subprocess.run([sys.executable, "-m", "harness.vec_isa"], capture_output=True, text=True,
                                   env=child_env, timeout=PROBE_TIMEOUT_S)
        found = json.loads(completed.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError) as exc:
        return f"{VARIABLE} not set: the ISA probe gave no answer ({type(exc).__name__}); every cell probes"
    return decide(found, environ)


def decide(found: dict[str, list[str]], environ: dict[str, str]) -> str:
    if found["probed"] != found["assumed"]:
        return (f"{VARIABLE} not set: Inductor's probe accepts {found['probed']}, the CPU's flags claim "
                f"{found['assumed']}; every cell probes")
    environ[VARIABLE] = "1"
    return f"{VARIABLE}=1: Inductor's probe accepts exactly the ISAs the CPU claims ({', '.join(found['probed']) or 'none'})"


if __name__ == "__main__":
    print(json.dumps(probe()))
