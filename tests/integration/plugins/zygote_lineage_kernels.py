"""A plug-in whose launch fails with a line that says where the worker running it came from.

`zygote_lineage` is the built-in `add` whose launch raises `RuntimeError("forked by the controller's own zygote")`
when the worker's parent (the run's zygote) is a child of the run's controller, as when the harness starts the zygote
as a new Python, and `RuntimeError("forked by a zygote the suite's maker forked")` otherwise (tests/zygote_maker.py).
Its control (`native`) passes. tests/unit/test_zygote_maker.py reads the line.
"""

import dataclasses
import os

from kernels import add


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def launch(wrap, x, y):
    zygote, owner = os.getppid(), int(os.environ["TCM_LOADER_OWNER"])  # harness.run.loader_zygote's variable
    if _parent_of(zygote) == owner:
        raise RuntimeError("forked by the controller's own zygote")
    raise RuntimeError("forked by a zygote the suite's maker forked")


SPEC = dataclasses.replace(add.SPEC, name="zygote_lineage", launch=launch)
