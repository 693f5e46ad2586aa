"""Stream compaction as most people write it: the data-dependent size forced to a Python int.

The same kernels as `kernels/data_dependent_output.py` (keep x's positive elements, in order); only the line
that brings the count to the host differs. There, `count.item()` stays a SymInt under fake tensors, with
`torch._check(size >= 0)`, as PyTorch documents for data-dependent sizes. Here it is `int(count.item())`, which
asks a traced program for a concrete value that only the data knows: the two kernels side by side show, cell by
cell, where that one `int()` breaks tracing (torch.compile fullgraph, export, AOTInductor) and `advise` names the
fix (harness/report/fixes.py, rule `symint_size`).
"""

from __future__ import annotations

import torch

from harness.domain.spec import KernelSpec
from kernels._elementwise import one_random_vector
from kernels.data_dependent_output import BLOCK, compact_positive_kernel, count_positive_kernel, reference


def launch(wrap, x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_elements = x.numel()
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    wrap(count_positive_kernel)[(1,)](x, count, n_elements, BLOCK=BLOCK)
    size = int(count.item())  # the usual way: a concrete Python int, which a traced program cannot have
    out = torch.empty(size, dtype=x.dtype, device=x.device)
    wrap(compact_positive_kernel)[(1,)](x, out, n_elements, BLOCK=BLOCK)
    return out


SPEC = KernelSpec(
    name="data_dependent_output_int",
    kernels=(count_positive_kernel, compact_positive_kernel),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    accepts_noncontiguous=True,
    features=("data-dependent-output", "data-dependent-int", "grid-tuple"),
    description="x[x > 0], fp32: data_dependent_output's kernels with the size written int(count.item()), as most "
    "code does, instead of a SymInt with torch._check",
)
