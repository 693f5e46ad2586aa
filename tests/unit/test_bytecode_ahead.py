"""Torch's bytecode compiled ahead of the zygote's imports, where a run's bytecode cache holds none yet."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.run.startup import bytecode_ahead
from harness.run.startup.bytecode_ahead import (
    BUSY_CORES,
    MIN_SPARE_CORES,
    package_folders,
    start_compiling_ahead,
    stop_compiling,
    torch_bytecode_missing,
)

ENOUGH_CORES = BUSY_CORES + MIN_SPARE_CORES


def _installed_folder(distribution: str, top: str) -> Path | None:
    try:
        return Path(str(importlib.metadata.distribution(distribution).locate_file(top)))
    except importlib.metadata.PackageNotFoundError:
        return None


def test_torch_and_what_it_requires_are_compiled_but_not_its_extras() -> None:
    folders = set(package_folders(("torch",)))
    for distribution, top in (("torch", "torch"), ("sympy", "sympy"), ("mpmath", "mpmath"), ("networkx", "networkx"),
                              ("jinja2", "jinja2"), ("markupsafe", "markupsafe"), ("filelock", "filelock")):
        assert _installed_folder(distribution, top) in folders, distribution
    # pyyaml is one of torch's extras: what an extra brings is imported on demand, so it is not compiled ahead
    yaml = _installed_folder("pyyaml", "yaml")
    if yaml is not None:
        assert yaml not in folders
    assert all(folder.is_dir() or folder.suffix == ".py" for folder in folders)


def test_nothing_starts_without_a_cache_of_the_runs_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert not torch_bytecode_missing()
    assert start_compiling_ahead(cores=64) is None


def test_nothing_is_written_into_a_cache_the_user_forbade_writing(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not torch_bytecode_missing()
    assert start_compiling_ahead(cores=64) is None


def test_nothing_starts_once_torchs_bytecode_is_in_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert torch_bytecode_missing()
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.origin is not None
    compiled = Path(importlib.util.cache_from_source(spec.origin))
    assert compiled.is_relative_to(tmp_path)
    compiled.parent.mkdir(parents=True)
    compiled.write_bytes(b"")
    assert not torch_bytecode_missing()
    assert start_compiling_ahead(cores=64) is None


def test_nothing_starts_without_cores_to_spare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(bytecode_ahead, "package_folders", lambda: pytest.fail("looked for packages"))
    assert start_compiling_ahead(cores=ENOUGH_CORES - 1) is None


def test_the_packages_are_compiled_into_the_cache_as_imports_would(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    package = tmp_path / "tests" / "site-packages" / "tcm_ahead_probe"  # a folder named `tests` above, as .nox/tests
    (package / "tests").mkdir(parents=True)
    (package / "__init__.py").write_text("VALUE = 1\n")
    (package / "tests" / "test_it.py").write_text("VALUE = 2\n")
    prefix = tmp_path / "pyc"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(bytecode_ahead, "package_folders", lambda: [package])
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # would make compileall write hash-checked files
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    process = start_compiling_ahead(cores=ENOUGH_CORES)
    assert process is not None
    assert process.wait(timeout=120) == 0
    compiled = Path(importlib.util.cache_from_source(str(package / "__init__.py")))
    assert compiled.is_relative_to(prefix)
    flags = struct.unpack("<I", compiled.read_bytes()[4:8])[0]
    assert flags == 0, "a timestamp-checked file, as an import writes"
    assert not (package / "__pycache__").exists()  # never beside the sources
    assert not Path(importlib.util.cache_from_source(str(package / "tests" / "test_it.py"))).exists()


def test_a_compile_still_going_is_stopped_with_its_pool() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    started = time.monotonic()
    stop_compiling(process)
    assert process.returncode is not None and time.monotonic() - started < 10
    stop_compiling(None)
