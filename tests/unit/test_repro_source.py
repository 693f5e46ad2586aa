"""repro's kernel source: the spec's module made standalone (harness imports out, local helpers in)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from harness.domain.repro_source import ReproSourceError, kernel_spec_stand_in, standalone_module_source


def _package(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def importable(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield lambda files, module: (_package(tmp_path, files), importlib.import_module(module))[1]
    for name in [n for n in sys.modules if n.startswith("mylib")]:
        del sys.modules[name]


def test_the_catalogues_add_needs_no_harness_and_inlines_its_helpers():
    import kernels.add

    text = standalone_module_source(kernels.add)
    assert not re.search(r"^\s*(from|import) (harness|kernels)\b", text, re.MULTILINE)
    assert text.index("def grid_1d") < text.index("def launch")  # a helper before its user


def test_a_local_helper_module_is_inlined_once_and_an_aliased_name_is_bound(importable):
    module = importable({"mylib/__init__.py": "", "mylib/util.py": "FACTOR = 3\n",
                         "mylib/specs.py": "from mylib.util import FACTOR\nfrom mylib.util import FACTOR as F\n"},
                        "mylib.specs")
    text = standalone_module_source(module)
    assert text.count("FACTOR = 3") == 1 and "F = FACTOR" in text
    namespace: dict = {}
    exec(text, namespace)
    assert namespace["F"] == 3


def test_a_module_imported_from_a_package_becomes_a_namespace(importable):
    module = importable({"mylib/__init__.py": "", "mylib/util.py": "FACTOR = 3\n",
                         "mylib/specs.py": "from mylib import util\nDOUBLE = util.FACTOR * 2\n"}, "mylib.specs")
    namespace: dict = {}
    exec(standalone_module_source(module), namespace)
    assert namespace["DOUBLE"] == 6


def test_a_harness_name_other_than_kernelspec_is_refused_with_its_line(importable):
    module = importable({"mylib/__init__.py": "", "mylib/specs.py": "x = 1\nfrom harness.domain.spec import identity_wrap\n"},
                        "mylib.specs")
    with pytest.raises(ReproSourceError, match=r"mylib.specs:2: imports identity_wrap from the harness"):
        standalone_module_source(module)


def test_the_stand_in_has_the_real_fields_and_defaults():
    import dataclasses

    import torch

    from harness.domain.spec import KernelSpec

    namespace: dict = {"torch": torch}
    exec(kernel_spec_stand_in(), namespace)
    stand_in = namespace["KernelSpec"]
    assert [f.name for f in dataclasses.fields(stand_in)] == [f.name for f in dataclasses.fields(KernelSpec)]
    made = stand_in(name="n", kernels=(), arguments=(("x", torch.Tensor),), launch=None, reference=None, make_inputs=None)
    assert made.sizes == (1000, 1537) and made.argument_names == ("x",) and made.differentiable_names == ("x",)
