"""Two kernels whose verdict depends on order, to prove that `harness order-check` sees an order dependence.

`order_victim` is right unless `order_setter` was launched earlier in the same process: a module-level flag,
the kind of state a plug-in can leave in a long-lived worker. Load with `--kernels-from`.
"""

from __future__ import annotations

import dataclasses

from harness.domain.spec import identity_wrap
from kernels import add

_setter_ran = False


def launch_setter(wrap, x, y):
    global _setter_ran
    if wrap is identity_wrap:
        _setter_ran = True
    return add.launch(wrap, x, y)


def launch_victim(wrap, x, y):
    out = add.launch(wrap, x, y)
    return out + 1 if _setter_ran else out


SPECS = [dataclasses.replace(add.SPEC, name="order_setter", launch=launch_setter, description="sets a flag (order-check)"),
         dataclasses.replace(add.SPEC, name="order_victim", launch=launch_victim,
                             description="wrong after order_setter ran in its process (order-check)")]
