"""`int(count.item())` in the launch, with the fake a library writes for it: what a hand-written fake buys.

The same launch as `kernels/data_dependent_output_int.py`. There the harness derives the operator's fake from the
launch, which asks a fake tensor for its value and fails every traced pipeline of `custom_op`; this is how a
library that keeps the `int()` makes those pipelines trace: it registers its own fake (`torch.library.register_fake`,
here the spec's `fake`), whose size is `torch.library.get_ctx().new_dynamic_size()`, an unbacked SymInt, and
never reads the data. The two kernels side by side show what the derived fake costs and what a hand-written one buys.
"""

from __future__ import annotations

import torch

from harness.domain.spec import KernelSpec
from kernels._elementwise import one_random_vector
from kernels.data_dependent_output import compact_positive_kernel, count_positive_kernel, reference
from kernels.data_dependent_output_int import launch


def fake(x: torch.Tensor) -> torch.Tensor:
    """The op's register_fake: an output of a size only the data knows (torch.library's own `nonzero` example).

    No `max=x.numel()`: under dynamic shapes that bound is a SymInt, which `new_dynamic_size` refuses (opcheck's
    dynamic-shape test measured it: "expected min and max to be statically known ints")."""
    size = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty(size)


SPEC = KernelSpec(
    name="data_dependent_output_int_fake",
    kernels=(count_positive_kernel, compact_positive_kernel),
    arguments=(("x", torch.Tensor),),
    launch=launch,
    reference=reference,
    make_inputs=one_random_vector,
    accepts_noncontiguous=True,
    fake=fake,
    features=("data-dependent-output", "data-dependent-int", "own-fake", "grid-tuple"),
    description="x[x > 0], fp32: data_dependent_output_int's launch (int(count.item())) with a hand-written fake "
    "(register_fake, new_dynamic_size) in place of the one the harness derives from the launch",
)
