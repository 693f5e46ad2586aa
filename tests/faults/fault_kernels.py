"""Kernels made to misbehave, loaded with `--kernels-from`, to prove that isolation holds.

Each fault lives in the launch, so every style that launches (not `native`) meets it.
The `after_*` witnesses are ordinary kernels defined after the faults, so in a one-worker
run they execute after every fault, in the same worker, and must be untouched by them.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time

import torch

from harness.spec import KernelSpec, identity_wrap
from kernels import add, sin


def _fault(name: str, misbehave) -> KernelSpec:
    def launch(wrap, x, y):
        if wrap is identity_wrap:  # only when really launching: fake/meta probes stay harmless
            misbehave()
        return add.launch(wrap, x, y)

    return dataclasses.replace(add.SPEC, name=name, launch=launch, description=f"fault injection: {name}")


def _segfault() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def _sleep_forever() -> None:
    time.sleep(24 * 3600)


def _exit_silently() -> None:
    os._exit(3)


def _corrupt_then_raise() -> None:
    """Leave the process poisoned four ways, then fail: a later cell in this process would see all of it."""
    import harness.checking

    harness.checking.TOLERANCES[torch.float32] = (-1.0, -1.0)  # a monkey-patched module: every fp32 check fails
    torch.empty_like = lambda x, **kwargs: torch.zeros(1, dtype=x.dtype)  # a monkey-patched torch
    torch._dynamo.config.suppress_errors = True  # a changed torch config
    torch.library.define("tcm_fault::leftover", "(Tensor x) -> Tensor")  # an extra registered op
    raise RuntimeError("raised after corrupting the checker, torch.empty_like, a dynamo config and the op registry")


SPECS = [
    _fault("fault_segfault", _segfault),
    _fault("fault_abort", os.abort),
    _fault("fault_hang", _sleep_forever),
    _fault("fault_exit", _exit_silently),
    _fault("fault_dirty", _corrupt_then_raise),
    dataclasses.replace(add.SPEC, name="after_add"),
    dataclasses.replace(sin.SPEC, name="after_sin"),
]
