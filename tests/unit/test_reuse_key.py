"""The content key of `--reuse` (harness.run.earlier.key) and the choice of reused records (harness.run.earlier.cells): a key
changes with every input it claims to hold, and with nothing else; a stale record is never copied."""

import dataclasses
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.results import REUSE_INPUTS, REUSE_KEY, REUSED_FROM, CellResult, ResultsWriter, header_record
from harness.run.earlier import key as reuse_key
from harness.run.earlier.cells import ReuseError, reused_cells
from harness.run.earlier.key import cell_key, cell_keys, kernel_inputs, kernel_key, kernel_keys, outcome_options, run_inputs
from harness.run.selection import Cell


@dataclasses.dataclass
class Spec:
    """What the key reads of a KernelSpec: its fields, callables and data, and the module it came from."""

    name: str
    kernels: tuple[Any, ...]
    launch: Any
    reference: Any
    sizes: tuple[int, int] = (1000, 1537)
    source: str = ""


FILES = {
    "keylib/__init__.py": "",
    "keylib/helper.py": "def factor():\n    return 3\n",
    "keylib/unused.py": "VALUE = 1\n",
    "keylib/scale.py": "from keylib.helper import factor\n\n\ndef launch(x):\n    return x * factor()\n",
    "keylib/shift.py": "import keylib.unused\n\n\ndef launch(x):\n    return x + 2\n",
    "keylib/specs.py": "from keylib import scale, shift\n",
}


@pytest.fixture
def library(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [name for name in sys.modules if name.startswith("keylib")]:
        monkeypatch.delitem(sys.modules, name)
    importlib.import_module("keylib.specs")
    yield tmp_path
    for name in [name for name in sys.modules if name.startswith("keylib")]:
        del sys.modules[name]


def specs():
    scale, shift = sys.modules["keylib.scale"], sys.modules["keylib.shift"]
    return {"scale": Spec("scale", (), scale.launch, lambda x: x * 3, source="keylib.specs"),
            "shift": Spec("shift", (), shift.launch, lambda x: x + 2, source="keylib.specs")}


def files(name):
    """The library's files in a kernel's key (the test module, which defines the references, counts too)."""
    found = specs()
    others = frozenset().union(*(reuse_key._held(spec) for other, spec in found.items() if other != name))
    return sorted(path.split("keylib/")[-1] for path in kernel_inputs(found[name], others - reuse_key._held(found[name]))["files"]
                  if "keylib" in path)


def keys():
    return kernel_keys(specs(), {"scale", "shift"})


def test_a_kernel_counts_the_files_its_code_reaches_and_not_its_neighbours(library):
    assert files("scale") == ["__init__.py", "helper.py", "scale.py", "specs.py"]
    assert files("shift") == ["__init__.py", "shift.py", "specs.py", "unused.py"]  # a module it imports counts


@pytest.mark.parametrize("edited, changes", [
    ("keylib/scale.py", {"scale"}),
    ("keylib/helper.py", {"scale"}),  # a helper module the kernel's module imports
    ("keylib/unused.py", {"shift"}),
    ("keylib/specs.py", {"scale", "shift"}),  # the spec module itself
    ("keylib/__init__.py", {"scale", "shift"}),  # a package above the kernel's module
])
def test_an_edit_changes_the_keys_of_the_kernels_that_reach_it_only(library, edited, changes):
    before = keys()
    path = library / edited
    path.write_text(path.read_text() + "\n# edited\n")
    after = keys()
    assert {name for name in before if before[name] != after[name]} == changes


def test_the_key_is_the_same_when_nothing_changed_and_changes_with_the_specs_data(library):
    spec = specs()["scale"]
    assert kernel_key(spec) == kernel_key(specs()["scale"])
    assert kernel_key(dataclasses.replace(spec, sizes=(64, 96))) != kernel_key(spec)


def run(torch="2.13.0", timeout_s=600.0):
    environment = {"torch": torch, "triton": "3.7.1", "tier": "cpu", "interpreter": True, "os": "any", "cpu_count": 2}
    return run_inputs(environment, outcome_options("worker", False, True, timeout_s, 1))


def test_the_runs_part_holds_torch_the_options_and_not_the_host():
    assert run() == run()
    assert run(torch="2.12.0") != run()
    assert run(timeout_s=5.0) != run()
    other_host = run_inputs({**run()["environment"], "os": "other", "cpu_count": 64}, run()["options"])
    assert other_host == run()
    assert cell_key("k", "a/raw/eager", run()) != cell_key("k", "a/raw/eager", run(torch="2.12.0"))
    assert cell_key("k", "a/raw/eager", run()) != cell_key("k", "a/custom_op/eager", run())


def test_the_harness_source_is_in_the_key(tmp_path, monkeypatch):
    (tmp_path / "harness").mkdir()
    (tmp_path / "matrix").mkdir()
    (tmp_path / "harness" / "cell.py").write_text("A = 1\n")
    monkeypatch.setattr(reuse_key, "HARNESS_ROOT", tmp_path / "harness")
    monkeypatch.setattr(reuse_key, "MATRIX_ROOT", tmp_path / "matrix")
    reuse_key.harness_source_hash.cache_clear()
    try:
        before = reuse_key.harness_source_hash()
        (tmp_path / "harness" / "cell.py").write_text("A = 2\n")
        reuse_key.harness_source_hash.cache_clear()
        assert reuse_key.harness_source_hash() != before
    finally:
        reuse_key.harness_source_hash.cache_clear()


# ---- which records are copied ----

def write(path, run_part, cells):
    header = header_record({"torch": "2.13.0", "tier": "cpu"}, "2026-01-01T00:00:00+00:00", ["harness", "run"],
                           **({REUSE_INPUTS: run_part} if run_part is not None else {}))
    writer = ResultsWriter(path, header)
    for cell_id, outcome, key in cells:
        kernel, style, pipeline = cell_id.split("/")
        writer.write_cell(CellResult(cell_id, kernel, style, pipeline, outcome,
                                     detail={REUSE_KEY: key} if key else {}))
    writer.close()
    return path


def test_a_record_is_copied_only_when_its_key_and_the_runs_part_are_this_runs(tmp_path):
    path = write(tmp_path / "old.jsonl", run(), [("a/raw/eager", "pass", "k1"), ("b/raw/eager", "fail", "old"),
                                                 ("c/raw/eager", "pass", None), ("d/raw/eager", "crash", "k4")])
    keys = {"a/raw/eager": "k1", "b/raw/eager": "k2", "c/raw/eager": "k3", "d/raw/eager": "k4", "e/raw/eager": "k5"}
    reused, line = reused_cells(path, keys, run())
    assert list(reused) == ["a/raw/eager"]  # b's key changed, c has none, d crashed (may be the machine), e is new
    assert reused["a/raw/eager"].detail[REUSED_FROM] == {"file": str(path), "started": "2026-01-01T00:00:00+00:00"}
    assert reused["a/raw/eager"].detail[REUSE_KEY] == "k1"
    assert "1 of 5 cells reused" in line


@pytest.mark.parametrize("earlier, words", [(run(torch="2.12.0"), "torch '2.12.0' -> '2.13.0'"),
                                            (None, "no reuse inputs")])
def test_another_runs_part_reuses_nothing_and_says_why(tmp_path, earlier, words):
    path = write(tmp_path / "old.jsonl", earlier, [("a/raw/eager", "pass", "k1")])
    reused, line = reused_cells(path, {"a/raw/eager": "k1"}, run())
    assert reused == {}
    assert words in line


def test_a_missing_or_broken_file_is_one_line(tmp_path):
    with pytest.raises(ReuseError, match="names no results file"):
        reused_cells(tmp_path / "none.jsonl", {}, run())
    (tmp_path / "bad.jsonl").write_text(json.dumps({"record": "cell"}) + "\n")
    with pytest.raises(ReuseError, match="bad.jsonl"):
        reused_cells(tmp_path / "bad.jsonl", {}, run())


def test_cell_keys_give_each_cell_its_kernels_key(library):
    found = specs()
    cells = [Cell("scale", "raw", "eager"), Cell("scale", "native", "eager"), Cell("shift", "raw", "eager")]
    keys = cell_keys(found, cells, run())
    assert len(set(keys.values())) == 3
    helper = library / "keylib" / "helper.py"
    helper.write_text(helper.read_text() + "\n# edited\n")
    after = cell_keys(found, cells, run())
    assert [cell for cell in keys if keys[cell] != after[cell]] == ["scale/raw/eager", "scale/native/eager"]


def test_the_harness_source_hashed_is_the_harness_package():
    import harness

    assert reuse_key.HARNESS_ROOT == Path(harness.__file__).resolve().parent
    assert (reuse_key.MATRIX_ROOT / "test_eager.py").is_file()
