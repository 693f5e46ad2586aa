"""A plug-in whose launch fails with a line that says how the process running it was started.

`zygote_lineage` is the built-in `add` whose launch raises `RuntimeError("in a process the suite's zygote maker
forked")` when the process came from the suite's zygote maker (tests/zygote_maker.py: its Python was started as
tests/command_starter.py), and `RuntimeError("in a Python the harness started: -m MODULE")` otherwise: a worker forked
from a zygote the harness started as a new Python (`-m harness.run.startup.loader_zygote`), or a cell's own new Python in
process isolation (`-m harness.run.isolation.cell_worker`). A forked process keeps the `sys.orig_argv` of the Python it was
forked from. The line ends with the process's intra-op thread count (`; N threads`). Its control (`native`) passes.
tests/unit/test_zygote_maker.py reads the line.
"""

import dataclasses
import sys

import torch

from kernels import add


def launch(wrap, x, y):
    started = sys.orig_argv[1:]
    threads = f"; {torch.get_num_threads()} threads"
    if any(argument.endswith("command_starter.py") for argument in started):
        raise RuntimeError("in a process the suite's zygote maker forked" + threads)
    raise RuntimeError(f"in a Python the harness started: {' '.join(started[:2])}" + threads)


SPEC = dataclasses.replace(add.SPEC, name="zygote_lineage", launch=launch)
