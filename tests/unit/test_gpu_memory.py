"""Free GPU memory is poisoned between cells: which blocks are free, and that nothing is done without CUDA."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from harness.domain.poison import free_blocks, unwritten_elements
from harness.run import gpu_memory
from harness.run.environment import resolve_tier
from harness.run.gpu_memory import fill_free_gpu_memory

TIER = resolve_tier("auto")
SNAPSHOT = [  # the shape of torch.cuda.memory_snapshot(): segments, each with its blocks
    {"device": 0, "address": 1000, "blocks": [{"address": 1000, "size": 512, "state": "active_allocated"},
                                              {"address": 1512, "size": 512, "state": "inactive"}]},
    {"device": 1, "address": 9000, "blocks": [{"address": 9000, "size": 2048, "state": "inactive"},
                                              {"address": 11048, "size": 64, "state": "active_pending_free"}]},
]


def test_only_the_blocks_held_free_are_filled_on_their_own_device():
    assert free_blocks(SNAPSHOT) == [(0, 1512, 512), (1, 9000, 2048)]
    assert free_blocks([{"device": 0, "address": 0}]) == []  # a segment without blocks


@pytest.mark.skipif(TIER != "cpu", reason="without CUDA: the CPU tier's case")
def test_without_cuda_in_use_nothing_is_filled():
    assert fill_free_gpu_memory() == 0  # the fill neither starts CUDA nor fails
    assert not torch.cuda.is_initialized()


@pytest.mark.skipif(TIER != "gpu", reason="needs a GPU")
def test_a_freed_block_reads_the_poison_once_filled():
    freed = torch.arange(1000, device="cuda", dtype=torch.float32)
    address = freed.data_ptr()
    del freed
    assert fill_free_gpu_memory() > 0
    reused = torch.empty(1000, device="cuda", dtype=torch.float32)
    assert reused.data_ptr() == address  # the allocator handed the same block back: now NaN, not the freed values
    assert reused.isnan().all()
    assert unwritten_elements(reused) == 1000


def test_cyclic_garbage_is_collected_before_the_blocks_are_listed(monkeypatch):
    """A tensor an earlier cell left in a reference cycle must be freed before the fill, not in the middle of a
    later cell (harness.run.gpu_memory's docstring): the cycle is gone when the allocator is asked for free blocks."""
    import gc
    import sys
    import weakref
    from types import SimpleNamespace

    class Holder:
        pass

    cycle = Holder()
    cycle.itself = cycle
    alive = weakref.ref(cycle)
    del cycle
    seen = []
    fake_cuda = SimpleNamespace(is_initialized=lambda: True, memory_snapshot=lambda: seen.append(alive() is None) or [],
                                synchronize=lambda: None)
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=fake_cuda))
    monkeypatch.setattr(gpu_memory._Frozen, "modules", 10**9)  # this test's process is not frozen (the test below is)
    threshold = gc.get_threshold()  # nor left without full collections
    gc.disable()  # only the fill may collect it
    try:
        assert fill_free_gpu_memory() == 0
    finally:
        gc.enable()
        gc.set_threshold(*threshold)
    assert seen == [True]


FREEZE_CODE = """
import gc, json, sys, weakref
from harness.run.gpu_memory import NO_AUTOMATIC_FULL_COLLECTION, collect_cyclic_garbage

class Holder:
    pass

full_before = gc.get_threshold()[2]
collect_cyclic_garbage()
first = gc.get_freeze_count()
held = [[index] for index in range(1000)]  # new objects, alive, no module imported since
collect_cyclic_garbage()
again = gc.get_freeze_count()
import fractions  # a module this process had not imported
collect_cyclic_garbage()
after_import = gc.get_freeze_count()
cycle = Holder()
cycle.itself = cycle
alive = weakref.ref(cycle)
del cycle
collect_cyclic_garbage()
print(json.dumps([first > 0, again == first, after_import >= again + 1000, alive() is None,
                  full_before < NO_AUTOMATIC_FULL_COLLECTION == gc.get_threshold()[2]]))
"""


def test_what_survives_a_collection_is_frozen_when_modules_were_imported_since():
    """Frozen: what the process held after its first collection, and again after a module import; not frozen: what
    was made with no import since; a cycle made after a freeze is still collected; from then on the collector starts
    no full collection itself (in a new Python: a freeze and a threshold last)."""
    completed = subprocess.run([sys.executable, "-c", FREEZE_CODE], capture_output=True, text=True, timeout=120)
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == [True] * 5, completed.stderr[-2000:]


WORKER_FREEZE_CODE = """
import gc, json
from harness.run.gpu_memory import collect_cyclic_garbage, freeze_what_is_held, frozen_yet

before = frozen_yet()
freeze_what_is_held()  # what a worker does before its first cell
first = gc.get_freeze_count()
held = [[index] for index in range(1000)]
collect_cyclic_garbage()  # no module imported since the worker's freeze: nothing more frozen
print(json.dumps([before is False, frozen_yet(), first > 0, gc.get_freeze_count() == first]))
"""


def test_the_workers_freeze_before_its_first_cell_is_the_one_the_collections_count_from():
    """One record of the freezes: a collection after the worker's own freeze, with no import since, freezes nothing."""
    completed = subprocess.run([sys.executable, "-c", WORKER_FREEZE_CODE], capture_output=True, text=True, timeout=120)
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == [True] * 4, completed.stderr[-2000:]
