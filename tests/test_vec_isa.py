"""The GPU tier's one-per-run ISA probe: TORCHINDUCTOR_VEC_ISA_OK=1 only when it changes no Inductor choice."""

import json
import os
import subprocess
import sys

from harness.vec_isa import VARIABLE, decide, settle


def test_set_only_when_the_probe_accepts_exactly_what_the_cpu_claims() -> None:
    environ: dict[str, str] = {}
    message = decide({"probed": ["avx512", "avx2"], "assumed": ["avx512", "avx2"]}, environ)
    assert environ == {VARIABLE: "1"} and "avx512, avx2" in message
    environ = {}
    message = decide({"probed": ["avx2"], "assumed": ["amx", "avx2"]}, environ)
    assert environ == {} and "not set" in message and "['amx', 'avx2']" in message


def test_a_value_the_user_set_is_kept_and_nothing_is_probed() -> None:
    environ = {VARIABLE: "0"}  # no PATH, no python: a probe here could not even start
    assert settle(environ) == f"{VARIABLE}=0 kept as set" and environ == {VARIABLE: "0"}


def test_the_real_probe_on_this_machine_agrees_with_its_decision() -> None:
    """Inductor's own probe, run here in a fresh process; the decision must follow from what it found."""
    environ = {key: value for key, value in os.environ.items() if key != VARIABLE}
    message = settle(environ)
    completed = subprocess.run([sys.executable, "-m", "harness.vec_isa"], capture_output=True, text=True, check=True,
                               env={k: v for k, v in environ.items() if k != VARIABLE})
    found = json.loads(completed.stdout)  # probed again in a fresh process (probing here would change torch's config)
    assert (environ.get(VARIABLE) == "1") == (found["probed"] == found["assumed"]), message
    assert "gave no answer" not in message
