"""A worker-mode worker makes its CUDA context in a thread from its configure on, and its first cell starts only once
that is done (harness.run.isolation.worker_mode): every cell starts with the context made; what the worker holds by then is
frozen out of the garbage collector's sight once. The context and the freeze are stood in for here."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from harness.run import gpu_memory
from harness.run.cell import CellRequest, result_for
from harness.run.isolation import worker_mode


def test_the_first_cell_starts_once_the_context_is_made_and_later_cells_do_not_wait(monkeypatch, tmp_path):
    made, started = [], []

    def make_context() -> None:
        time.sleep(0.5)
        made.append((time.monotonic(), threading.current_thread().name))

    def execute_cell(request, *args, **kwargs):
        started.append(time.monotonic())
        return result_for(request, "pass")

    idle = SimpleNamespace(enable=lambda *a, **k: None, dump_traceback_later=lambda *a, **k: None,
                           cancel_dump_traceback_later=lambda: None)
    monkeypatch.setattr(worker_mode, "_slot", worker_mode._Slot())  # this process is no worker: restored afterwards
    monkeypatch.setattr(worker_mode, "faulthandler", idle)
    monkeypatch.setattr(worker_mode, "_make_cuda_context", make_context)
    monkeypatch.setattr(worker_mode, "execute_cell", execute_cell)
    frozen = []

    def freeze_what_is_held():  # not this test process's heap; recorded as the real one records its freeze
        frozen.append(time.monotonic())
        gpu_memory._Frozen.modules = 1

    monkeypatch.setattr(gpu_memory._Frozen, "modules", 0)  # not frozen yet, as a new worker
    monkeypatch.setattr(worker_mode, "freeze_what_is_held", freeze_what_is_held)
    configured = time.monotonic()
    worker_mode.configure(tmp_path / "gw0", cuda_context_ahead=True)
    assert time.monotonic() - configured < 0.4, "configure does not wait for the context"
    for style in ("native", "raw"):
        assert worker_mode.run_in_worker(CellRequest("add", style, "eager", "cpu"), 60.0).outcome == "pass"
    assert len(made) == 1 and made[0][1] == "tcm-cuda-context"
    assert started[0] >= made[0][0], "the first cell started before the context was made"
    assert len(frozen) == 1 and made[0][0] <= frozen[0] <= started[0], "frozen once, before the first cell"


def test_without_the_gpu_tier_no_context_is_made(monkeypatch, tmp_path):
    monkeypatch.setattr(worker_mode, "_slot", worker_mode._Slot())
    monkeypatch.setattr(worker_mode, "_make_cuda_context", lambda: (_ for _ in ()).throw(AssertionError("made")))
    worker_mode.configure(tmp_path / "gw0")
    assert worker_mode._slot.cuda_context is None
