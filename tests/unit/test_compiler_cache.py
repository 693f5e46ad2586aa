"""The suite's C++ compiler cache (tests/compiler_cache): a call is kept by the content of its inputs, never by their
paths, and only calls that write one object or library are kept; a hit writes the kept output without the compiler."""

import os
import subprocess
import sys
from pathlib import Path

from compiler_cache.compiler_cache import CACHE_VARIABLE, REAL_VARIABLE, cache_key

SHIM = Path(__file__).resolve().parents[1] / "compiler_cache" / "g++"
# A stand-in compiler: writes its inputs' bytes, reversed, to -o, and counts its calls.
FAKE = """#!{python}
import sys
arguments = sys.argv[1:]
output = arguments[arguments.index("-o") + 1]
sources = [a for a in arguments if a.endswith(".cpp")]
open(output, "wb").write(b"".join(open(s, "rb").read()[::-1] for s in sources))
open({calls!r}, "a").write("call\\n")
"""


def _fake_compiler(tmp_path: Path) -> tuple[Path, Path]:
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "fake-g++"
    fake.write_text(FAKE.format(python=sys.executable, calls=str(calls)))
    fake.chmod(0o755)
    return fake, calls


def test_the_key_follows_the_sources_content_not_its_path_nor_the_output(tmp_path):
    fake, _ = _fake_compiler(tmp_path)
    one, two = tmp_path / "a" / "k.cpp", tmp_path / "b" / "k.cpp"
    for source in (one, two):
        source.parent.mkdir()
        source.write_text("int f() { return 1; }\n")
    first = cache_key([str(one), "-O1", "-c", "-o", str(tmp_path / "a" / "k.o")], str(fake), {})
    second = cache_key([str(two), "-O1", "-c", "-o", str(tmp_path / "b" / "k.o")], str(fake), {})
    assert first is not None and second is not None and first[0] == second[0]
    assert cache_key([str(two), "-O3", "-c", "-o", "k.o"], str(fake), {})[0] != first[0]  # the flags count
    two.write_text("int f() { return 2; }\n")
    assert cache_key([str(two), "-O1", "-c", "-o", "k.o"], str(fake), {})[0] != first[0]  # and the content
    assert cache_key([str(one), "-O1", "-c", "-o", "k.o"], str(fake), {"CPATH": "/x"})[0] != first[0]


def test_only_calls_that_write_one_object_or_library_are_kept(tmp_path):
    fake, _ = _fake_compiler(tmp_path)
    source = tmp_path / "k.cpp"
    source.write_text("int f();\n")
    for arguments in (["--version"], [str(source), "-E", "-o", "k.i"], [str(source), "-c", "-o", "k.i"],
                      ["-x", "c++-header", str(source), "-o", "k.h.gch"], [str(source), "-c", "-o", "a.o", "-o", "b.o"]):
        assert cache_key(arguments, str(fake), {}) is None, arguments


def test_a_second_build_of_the_same_source_elsewhere_is_a_hit(tmp_path):
    fake, calls = _fake_compiler(tmp_path)
    environment = {**os.environ, CACHE_VARIABLE: str(tmp_path / "cache"), REAL_VARIABLE: str(fake),
                   "TCM_SUITE_CACHE_PYTHON": sys.executable}
    outputs = []
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        source = tmp_path / folder / "k.cpp"
        source.write_text("abc")
        output = tmp_path / folder / "k.o"
        completed = subprocess.run([str(SHIM), str(source), "-c", "-o", str(output)], env=environment,
                                   capture_output=True, text=True, timeout=60)
        assert completed.returncode == 0, completed.stderr
        outputs.append(output.read_bytes())
    assert outputs == [b"cba", b"cba"]
    assert calls.read_text().count("call") == 1  # the second came from the cache
    (tmp_path / "two" / "k.cpp").write_text("abd")
    subprocess.run([str(SHIM), str(tmp_path / "two" / "k.cpp"), "-c", "-o", str(tmp_path / "two" / "k.o")],
                   env=environment, check=True, timeout=60)
    assert (tmp_path / "two" / "k.o").read_bytes() == b"dba" and calls.read_text().count("call") == 2
