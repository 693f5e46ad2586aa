"""repro's kernel source: the spec's module made standalone (harness imports out, local helpers in)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from harness.domain.repro_source import ReproSourceError, standalone_module_source


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

    text, harness_names = standalone_module_source(kernels.add)
    assert harness_names == {"harness.domain.spec": {"KernelSpec"}}  # the reproducer copies the harness's own
    assert not re.search(r"^\s*(from|import) (harness|kernels)\b", text, re.MULTILINE)
    assert text.index("def grid_1d") < text.index("def launch")  # a helper before its user


def test_a_local_helper_module_is_inlined_once_and_an_aliased_name_is_bound(importable):
    module = importable({"mylib/__init__.py": "", "mylib/util.py": "FACTOR = 3\n",
                         "mylib/specs.py": "from mylib.util import FACTOR\nfrom mylib.util import FACTOR as F\n"},
                        "mylib.specs")
    text, _ = standalone_module_source(module)
    assert text.count("FACTOR = 3") == 1 and "F = FACTOR" in text
    namespace: dict = {}
    exec(text, namespace)
    assert namespace["F"] == 3


def test_a_module_imported_from_a_package_becomes_a_namespace(importable):
    module = importable({"mylib/__init__.py": "", "mylib/util.py": "FACTOR = 3\n",
                         "mylib/specs.py": "from mylib import util\nDOUBLE = util.FACTOR * 2\n"}, "mylib.specs")
    namespace: dict = {}
    exec(standalone_module_source(module)[0], namespace)
    assert namespace["DOUBLE"] == 6


def test_harness_names_are_reported_for_the_reproducer_to_define(importable):
    module = importable({"mylib/__init__.py": "",
                         "mylib/specs.py": "x = 1\nfrom harness.domain.tolerance import ToleranceOverride\n"}, "mylib.specs")
    text, harness_names = standalone_module_source(module)
    assert harness_names == {"harness.domain.tolerance": {"ToleranceOverride"}} and "import ToleranceOverride" not in text


def test_a_harness_name_imported_under_another_name_is_refused_with_its_line(importable):
    module = importable({"mylib/__init__.py": "",
                         "mylib/specs.py": "x = 1\nfrom harness.domain.spec import KernelSpec as Spec\n"}, "mylib.specs")
    with pytest.raises(ReproSourceError, match=r"mylib.specs:2: imports KernelSpec as Spec from the harness"):
        standalone_module_source(module)
