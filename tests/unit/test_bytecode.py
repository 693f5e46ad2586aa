"""The bytecode cache a run gives its child Pythons where PYTHONDONTWRITEBYTECODE forbids one."""

import compileall
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from harness.run.bytecode import DONT_WRITE, PREFIX, copy_into_prefix, default_prefix, enable_bytecode_cache, run_prefix


def test_a_forbidden_cache_moves_under_the_prefix(tmp_path: Path) -> None:
    environ = {DONT_WRITE: "1", "OTHER": "kept"}
    assert enable_bytecode_cache(environ, tmp_path / "pyc") == str(tmp_path / "pyc")
    assert environ == {PREFIX: str(tmp_path / "pyc"), "OTHER": "kept"}


def test_a_prefix_the_user_set_is_kept_with_their_setting(tmp_path: Path) -> None:
    environ = {DONT_WRITE: "1", PREFIX: "/theirs"}
    assert enable_bytecode_cache(environ, tmp_path) is None
    assert environ == {DONT_WRITE: "1", PREFIX: "/theirs"}


def test_nothing_changes_where_bytecode_may_be_written(tmp_path: Path) -> None:
    for environ in ({}, {DONT_WRITE: ""}):
        before = dict(environ)
        assert enable_bytecode_cache(environ, tmp_path) is None
        assert environ == before


def test_a_child_python_writes_its_bytecode_under_the_prefix_only(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "tcm_probe_module.py").write_text("VALUE = 1\n")
    environ = {k: v for k, v in os.environ.items() if k != PREFIX}
    environ[DONT_WRITE] = "1"
    environ["PYTHONPATH"] = str(source)
    prefix = tmp_path / "pyc"

    def import_probe() -> None:
        subprocess.run([sys.executable, "-c", "import tcm_probe_module"], env=environ, check=True)

    import_probe()
    assert not list(prefix.rglob("*.pyc")), "PYTHONDONTWRITEBYTECODE alone writes nothing"
    enable_bytecode_cache(environ, prefix)
    import_probe()
    assert "tcm_probe_module" in {p.name.split(".")[0] for p in prefix.rglob("*.pyc")}
    assert not (source / "__pycache__").exists(), "nothing is written beside the source"


def test_the_process_that_turns_it_on_writes_its_own_bytecode_under_the_prefix(tmp_path: Path) -> None:
    """A run's controller: started with PYTHONDONTWRITEBYTECODE, its later imports are cached from then on."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "tcm_probe_later.py").write_text("VALUE = 1\n")
    prefix = tmp_path / "pyc"
    environ = {k: v for k, v in os.environ.items() if k != PREFIX}
    environ.update({DONT_WRITE: "1", "PYTHONPATH": os.pathsep.join([str(source), *sys.path])})
    code = ("import sys; from pathlib import Path; from harness.run import bytecode; "
            f"bytecode.enable_bytecode_cache(prefix=Path({str(prefix)!r})); import tcm_probe_later; "
            "print(sys.dont_write_bytecode, sys.pycache_prefix)")
    done = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", str(prefix)]
    assert "tcm_probe_later" in {p.name.split(".")[0] for p in prefix.rglob("*.pyc")}
    assert not (source / "__pycache__").exists(), "nothing is written beside the source"


def test_a_command_imports_torch_with_the_cache_on(tmp_path: Path) -> None:
    """A command's first import of torch is its kernels' (harness.domain.registry, before enter_tier turns the cache
    on): the entry point turns it on first. Without that, a controller started with PYTHONDONTWRITEBYTECODE compiled
    torch from source on every run where the installed torch has no bytecode beside it. With a prefix set, Python
    reads and writes a module's bytecode only under it: torch's is there once the command has imported it."""
    environ = {k: v for k, v in os.environ.items() if k != PREFIX}
    environ.update({DONT_WRITE: "1", "TMPDIR": str(tmp_path)})  # the default prefix is under the temporary folder
    done = subprocess.run([sys.executable, "-m", "harness", "list"], env=environ, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    torch_folder = Path(importlib.util.find_spec("torch").origin).parent.as_posix()
    cached = [path for path in tmp_path.rglob("__init__.*.pyc") if path.parent.as_posix().endswith(torch_folder)]
    assert cached, "torch was imported with no bytecode cache"


def test_a_runs_prefix_is_the_users_or_its_own_where_bytecode_is_forbidden() -> None:
    assert run_prefix({PREFIX: "/theirs", DONT_WRITE: "1"}) == Path("/theirs")
    assert run_prefix({DONT_WRITE: "1"}) == default_prefix()
    assert run_prefix({}) is None and run_prefix({DONT_WRITE: ""}) is None
    assert run_prefix({PREFIX: "", DONT_WRITE: "1"}) is None  # as enable_bytecode_cache leaves it: no bytecode at all


def test_bytecode_copied_into_a_prefix_is_what_a_python_with_that_prefix_loads(tmp_path: Path, monkeypatch) -> None:
    """Compiled beside its source, copied under the prefix, and loaded from there: the source is then changed to the
    same size and modification time, which Python checks, so only the copied bytecode can give the old value."""
    installed = tmp_path / "site-packages"
    (installed / "tcm_package").mkdir(parents=True)
    module = installed / "tcm_package" / "probe.py"
    module.write_text("VALUE = 1\n")
    (installed / "tcm_package" / "__init__.py").write_text("")
    monkeypatch.setattr(sys, "pycache_prefix", None)  # this suite's own processes write under one (its conftest)
    assert compileall.compile_dir(installed, quiet=2)
    prefix = tmp_path / "prefix"
    assert copy_into_prefix(installed, prefix) == 2
    assert copy_into_prefix(installed, prefix) == 2  # again: replaced, not doubled
    assert not list(prefix.rglob("*.partial"))
    stat = module.stat()
    module.write_text("VALUE = 2\n")
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    environ = {k: v for k, v in os.environ.items() if k not in (PREFIX, "PYTHONPATH")}
    environ.update({PREFIX: str(prefix), DONT_WRITE: "1", "PYTHONPATH": str(installed)})
    done = subprocess.run([sys.executable, "-c", "from tcm_package import probe; print(probe.VALUE, probe.__cached__)"],
                          env=environ, capture_output=True, text=True, check=True)
    value, cached = done.stdout.split()
    assert value == "1" and Path(cached).is_relative_to(prefix)
