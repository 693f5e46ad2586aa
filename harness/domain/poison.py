"""Memory that a kernel did not write never holds the right answer: fresh allocations hold a poison value.

Why: a kernel that never stores its output (a launch that is skipped: FlopCounterMode does not launch a bare
`wrap_triton` kernel; a store to the wrong buffer) returns whatever its allocator handed back. Where that memory last
held the right answer (the reference's, computed just before), the check passed: the verdict was luck.

The poison is PyTorch's own junk pattern (c10's `memset_junk`): the 32-bit word 0x7fedbeef repeated, a NaN in float32,
1.7e308 in float64, NaN in every other float16 and bfloat16 element, and a huge value in every integer type. No
reference produces it.

- CPU: PyTorch's CPU allocator fills each new allocation with that pattern when c10's flag
  `caffe2_cpu_allocator_do_junk_fill` is set; `poison_cpu_allocations` sets it once per process, so every CPU
  allocation (eager, Inductor's buffers, AOTInductor's, the Triton interpreter's) is poisoned.
- CUDA: the caching allocator has no such flag. `poison_free_gpu_memory` fills every block it holds free with the same
  pattern, after reserving blocks the size of each answer expected, so that the op's outputs come from poisoned memory
  rather than from a segment just taken from the driver. The pipelines call it after the reference ran and before
  the op runs (harness.domain.pipelines.common), the fresh-process loaders before they run the program.

`unwritten_elements` counts the elements of an output that still hold the pattern: the evidence of a `wrong` cell
whose kernel never wrote ("the output was never written (it still holds the poison value)").
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable
from typing import Any

POISON_WORD = 0x7FEDBEEF  # c10's kJunkPattern
POISON_64 = POISON_WORD << 32 | POISON_WORD  # c10's kJunkPattern64: what each 8 bytes of a poisoned block hold
CPU_JUNK_FLAG = "FLAGS_caffe2_cpu_allocator_do_junk_fill"
_BITS = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}  # an integer dtype of each width, to compare raw bits


class _CpuPoison:
    """Whether this process set the flag (a forked child inherits both the flag and this record)."""

    set = False


def _cpu_flag() -> Any:
    """c10's junk-fill flag as a ctypes bool, or None where this build of torch has none (torch must be imported)."""
    import torch

    library = os.path.join(os.path.dirname(torch.__file__), "lib", "libc10.so")
    try:
        return ctypes.c_bool.in_dll(ctypes.CDLL(library), CPU_JUNK_FLAG)
    except (OSError, ValueError):  # not a Linux build of torch, or a build without the flag
        return None


def poison_in_force() -> str:
    """What the run's header records: how each device's fresh memory is poisoned here (harness.run.environment)."""
    cpu = "c10 junk fill (0x7fedbeef)" if _cpu_flag() is not None else f"none: torch here has no {CPU_JUNK_FLAG}"
    return f"cpu: {cpu}; cuda: free blocks filled with the same pattern before each run of the op"


def poison_cpu_allocations() -> bool:
    """Set c10's junk-fill flag in this process (torch must be imported: libc10 is loaded); whether it is set.

    A process forked after it inherits it; a new Python sets it itself (the cell, the fresh-process loaders)."""
    if _CpuPoison.set:
        return True
    flag = _cpu_flag()
    if flag is None:
        return False
    flag.value = True
    _CpuPoison.set = True
    return True


class _Memory:
    """A view of raw device memory for `torch.as_tensor` (CUDA array interface v3); it owns nothing."""

    def __init__(self, address: int, size: int) -> None:
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (address, False), "version": 3}


def free_blocks(snapshot: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """(device, address, size) of each block the allocator holds free, from `torch.cuda.memory_snapshot()`."""
    return [(segment["device"], block["address"], block["size"]) for segment in snapshot
            for block in segment.get("blocks", ()) if block.get("state") == "inactive" and block.get("size", 0) > 0]


def fill_with_poison(tensor: Any) -> None:
    """Fill a uint8 tensor's bytes with the pattern, 8 bytes at a time (blocks are multiples of 512 bytes)."""
    whole = tensor.numel() - tensor.numel() % 8
    if whole:
        tensor[:whole].view(_dtype("int64")).fill_(POISON_64)


def poison_free_gpu_memory(reserve_bytes: Iterable[int] = ()) -> int:
    """Reserve a block of each size in `reserve_bytes` on the current device (then free it), and fill every free
    block of every device with the pattern; the bytes filled (0 where CUDA is not in use)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return 0
    reserved = [torch.empty(size, dtype=torch.uint8, device="cuda") for size in reserve_bytes if size > 0]
    del reserved
    filled = 0
    for device, address, size in free_blocks(torch.cuda.memory_snapshot()):
        with torch.cuda.device(device):
            fill_with_poison(torch.as_tensor(_Memory(address, size), device=f"cuda:{device}"))
        filled += size
    if filled:
        torch.cuda.synchronize()
    return filled


def tensor_bytes(*trees: Any) -> list[int]:
    """The size in bytes of each tensor in `trees` (nested tuples and lists): the blocks to reserve for them."""
    import torch

    sizes: list[int] = []
    for tree in trees:
        if isinstance(tree, (tuple, list)):
            sizes.extend(tensor_bytes(*tree))
        elif isinstance(tree, torch.Tensor) and type(tree) is torch.Tensor:
            sizes.append(tree.numel() * tree.element_size())
    return sizes


def poison_memory(device: Any, reserve_bytes: Iterable[int] = ()) -> None:
    """Before an op runs on `device`: every CPU allocation from now on poisoned as it is made (once per process);
    on CUDA, the free memory poisoned too, with a block of each size in `reserve_bytes` among it."""
    poison_cpu_allocations()
    if getattr(device, "type", device) == "cuda":
        poison_free_gpu_memory(reserve_bytes)


def poison_before_run(device: Any, *expected: Any) -> None:
    """`poison_memory` with room reserved for tensors like `expected` (the reference's answers)."""
    poison_memory(device, tensor_bytes(*expected))


def _dtype(name: str) -> Any:
    import torch

    return getattr(torch, name)


def poison_like(tensor: Any) -> Any:
    """What `tensor` would hold where nothing wrote it: the pattern at each element's place in its storage."""
    import torch

    storage_bytes = tensor.untyped_storage().nbytes()
    words = torch.full((-(-storage_bytes // 8),), POISON_64, dtype=torch.int64, device=tensor.device)
    return words.view(torch.uint8)[:storage_bytes].view(tensor.dtype).as_strided(
        tensor.shape, tensor.stride(), tensor.storage_offset())


def unwritten_elements(tensor: Any) -> int:
    """How many elements of a plain dense tensor still hold the poison (0 for anything it cannot tell)."""
    import torch

    if not isinstance(tensor, torch.Tensor) or type(tensor) is not torch.Tensor or tensor.numel() == 0:
        return 0
    bits = _BITS.get(tensor.element_size())
    if bits is None or tensor.is_complex():
        return 0
    try:
        plain = tensor.detach()
        same = plain.view(_dtype(bits)) == poison_like(plain).view(_dtype(bits))
    except (RuntimeError, TypeError):  # a layout a view cannot take (sparse, quantized, a zero-size storage)
        return 0
    return int(same.sum())


def unwritten_note(tensor: Any) -> str | None:
    """The evidence for a mismatched output that still holds the poison, or None."""
    count = unwritten_elements(tensor)
    if count == 0:
        return None
    if count == tensor.numel():
        return "the output was never written (it still holds the poison value)"
    return f"{count} of {tensor.numel()} elements were never written (they still hold the poison value)"
