"""Between cells, the GPU memory PyTorch's allocator holds free is filled with the poison (harness.domain.poison).

Why: the caching allocator gives a cell the blocks an earlier cell freed, contents and all. An output that a
kernel never writes (FlopCounterMode does not launch a bare `wrap_triton` kernel) is whatever that memory held:
mostly garbage, so `wrong`; but where the block held the right answer of the cell before (the same shape, a style
that works), the check passes and the verdict depends on the order cells ran in (docs/maintainers.md, "Order
independence"). Filled with the poison, such an output is `wrong` whichever cell ran before. The pipelines poison
the free memory again between the reference and the op (harness.domain.pipelines.common), which also covers a
process per cell.

Python's cyclic garbage is collected first. An earlier cell can leave tensors in reference cycles (a compiled graph
and what it holds); left to Python's collector, they are freed whenever it next runs, in the middle of a later cell,
after the fill: their blocks then hold that cell's answer, unfilled. On the H100,
`tensor_descriptor/triton_op/compile_visible` (whose kernel never writes its output under torch.compile) passed its
output check after `raw`, `autograd_function` and `custom_op` ran in its worker, and was `wrong` with the
collection first (docs/maintainers.md, "Order independence", fifth case).

A full collection walks every object the collector tracks. The worker freezes what it holds before its first cell,
but the first cells of each pipeline import more modules (Inductor's code generators, export, AOTInductor), and a
collection then walked them before every later cell. So what survives a collection is frozen too whenever modules
were imported since the last freeze (docs/maintainers.md, "Isolation"). Frozen objects are never collected: garbage
among them later is freed by no collection, never in the middle of a cell.

From the first such collection on, the collector makes no full collection of its own: the harness makes them,
between cells. Python starts one when the objects that survived since the last full collection outnumber a quarter
of those it holds, counts that depend on what earlier cells left and on the freezes, so whether one ran in the
middle of a cell, and freed what then, depended on the cells before. Inductor caches by the `id()` of objects it
does not keep alive (the C++ wrapper's `int_array` declarations), and an AOTInductor build failed in a worker
only, with a declaration missing (docs/maintainers.md, "Order independence", the sixth case). Young collections
still run as usual inside a cell.
"""

from __future__ import annotations

import gc
import sys

from harness.domain.poison import poison_free_gpu_memory

NO_AUTOMATIC_FULL_COLLECTION = 2**31 - 1  # gc's third threshold: full collections the collector starts itself


class _Frozen:
    """This process's one record of its freezes: len(sys.modules) at the last one (0: never frozen)."""

    modules = 0


def freeze_what_is_held() -> None:
    """Move every object the process holds now out of the collector's sight for good, and record it; a worker does
    it once before its first cell (torch, the harness, the collected items), collect_cyclic_garbage after imports."""
    gc.freeze()
    _Frozen.modules = len(sys.modules)


def frozen_yet() -> bool:
    """Whether this process froze what it held (a worker asks before its first cell)."""
    return _Frozen.modules > 0


def collect_cyclic_garbage() -> None:
    """A full collection: what earlier cells left in cycles is freed now, not during a later cell. Then, if modules
    were imported since the last freeze here, what survived is frozen, out of later collections' way; and the
    collector is left to start young collections only (Python 3.14's incremental collector ignores that setting)."""
    gc.collect()
    if len(sys.modules) > _Frozen.modules:
        freeze_what_is_held()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, NO_AUTOMATIC_FULL_COLLECTION)


def fill_free_gpu_memory() -> int:
    """Collect cyclic garbage, then fill every free block of every device with the poison; the bytes filled (0
    where CUDA is not in use: then nothing is collected either)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return 0
    collect_cyclic_garbage()
    return poison_free_gpu_memory()
