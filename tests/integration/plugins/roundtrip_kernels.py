"""A plug-in loaded from a path (`--kernels-from FILE`): the fresh process of export_roundtrip must import it the
same way the run did, by its path, to register its op (tests/integration/test_export_roundtrip.py)."""

import dataclasses

from kernels import add

SPEC = dataclasses.replace(add.SPEC, name="plugin_add")
