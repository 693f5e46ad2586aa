"""Stream compaction: keep x's positive elements, in order. Their count decides the output's size.

One kernel counts, `.item()` brings the count to the host to allocate the output, a second kernel
compacts. The `.item()` is the point: torch.compile and export must decide what to do with a size that
only the data knows (a graph break, an unbacked symbol, or an error), and the cells record which. The
launch is written as PyTorch documents for such sizes (the count stays a SymInt under fake tensors, with
`torch._check(size >= 0)`), so the custom_op fake derived from it allocates an unbacked size instead of
failing on the harness's account.
One program walks the whole vector so that the order of the kept elements is the input's.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec
from kernels._elementwise import one_random_vector

BLOCK = 256


@triton.jit
def count_positive_kernel(in_ptr, count_ptr, n_elements, BLOCK: tl.constexpr):
    total = 0
    for start in range(0, n_elements, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        x = tl.load(in_ptr + offsets, mask=offsets < n_elements, other=0.0)
        total += tl.sum((x > 0).to(tl.int32), axis=0)
    tl.store(count_ptr, total)


@triton.jit
def compact_positive_kernel(in_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    written = 0
    for start in range(0, n_elements, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        x = tl.load(in_ptr + offsets, mask=offsets < n_elements, other=0.0)
        keep = (x > 0).to(tl.int32)
        position = written + tl.cumsum(keep, axis=0) - 1
        tl.store(out_ptr + position, x, mask=keep != 0)
        written += tl.sum(keep, axis=0)


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_elements = x.numel()
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    wrap(count_positive_kernel)[(1,)](x, count, n_elements, BLOCK=BLOCK)
    size = count.item()  # no int(): under fake tensors this is an unbacked SymInt, not a forced specialization
    torch._check(size >= 0)  # what a traced allocation needs to know of an unbacked size
    out = torch.empty(size, dtype=x.dtype, device=x.device)
    wrap(compact_positive_kernel)[(1,)](x, out, n_elements, BLOCK=BLOCK)
    return out


def reference(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0]



SPEC = KernelSpec(
    name="data_dependent_output",
    kernels=(count_positive_kernel, compact_positive_kernel),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    accepts_noncontiguous=True,
    features=("data-dependent-output", "grid-tuple"),
    description="x[x > 0], fp32: a count kernel, .item() for the output size (kept a SymInt, with "
    "torch._check(size >= 0), as PyTorch documents for data-dependent sizes), then a compaction kernel")
