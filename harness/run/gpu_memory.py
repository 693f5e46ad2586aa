"""Between cells, the GPU memory PyTorch's allocator holds free is filled with NaN.

Why: the caching allocator gives a cell the blocks an earlier cell freed, contents and all. An output that a
kernel never writes (FlopCounterMode does not launch a bare `wrap_triton` kernel) is whatever that memory held:
mostly garbage, so `wrong`; but where the block held the right answer of the cell before (the same shape, a style
that works), the check passes and the verdict depends on the order cells ran in (docs/maintainers.md, "Order
independence"). Filled with NaN, such an output is `wrong` whichever cell ran before. Worker isolation only: a
process per cell starts with no freed blocks.

Python's cyclic garbage is collected first. An earlier cell can leave tensors in reference cycles (a compiled graph
and what it holds); left to Python's collector, they are freed whenever it next runs, in the middle of a later cell,
after the fill: their blocks then hold that cell's answer, unfilled. On the H100,
`tensor_descriptor/triton_op/compile_visible` (whose kernel never writes its output under torch.compile) passed its
output check after `raw`, `autograd_function` and `custom_op` ran in its worker, and was `wrong` with the
collection first (docs/maintainers.md, "Order independence", fifth case).
"""

from __future__ import annotations

import gc
import sys
from typing import Any

FILL_BYTE = 0xFF  # all bits set: NaN in every floating-point dtype (float64 to the float8s), -1 in signed integers


def free_blocks(snapshot: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """(device, address, size) of each block the allocator holds free, from `torch.cuda.memory_snapshot()`."""
    return [(segment["device"], block["address"], block["size"]) for segment in snapshot
            for block in segment.get("blocks", ()) if block.get("state") == "inactive" and block.get("size", 0) > 0]


class _Memory:
    """A view of raw device memory for `torch.as_tensor` (CUDA array interface v3); it owns nothing."""

    def __init__(self, address: int, size: int) -> None:
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (address, False), "version": 3}


def fill_free_gpu_memory() -> int:
    """Collect cyclic garbage, then fill every free block of every device with FILL_BYTE; the bytes filled (0 where
    CUDA is not in use: then nothing is collected either)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return 0
    gc.collect()  # what earlier cells left in cycles is freed now, before the fill, not during a later cell
    filled = 0
    for device, address, size in free_blocks(torch.cuda.memory_snapshot()):
        with torch.cuda.device(device):
            torch.as_tensor(_Memory(address, size), device=f"cuda:{device}").fill_(FILL_BYTE)
        filled += size
    if filled:
        torch.cuda.synchronize()
    return filled
