"""A spec whose launch is plain PyTorch: it names add's kernel but never launches it, so Dynamo can trace it on the
CPU tier, where it skips every interpreted Triton launch. Its call-site cells show what the call site itself does
there (tests/integration/test_call_sites.py)."""

import dataclasses

from kernels import add


def launch(wrap, x, y):
    return x + y


SPEC = dataclasses.replace(add.SPEC, name="torch_add", launch=launch, description="x + y in PyTorch (a test plug-in)")
