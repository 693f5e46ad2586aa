"""The suite's C++ compiler cache: what Inductor's `g++` calls build, kept by the content of their inputs, for one
suite run (tests/conftest.py names this folder's `g++` in CXX, which Inductor reads, and the cache in CACHE_VARIABLE).

Why: an AOTInductor build compiles its wrapper (about 6 CPU seconds on two cores) every time, with no cache of
Inductor's own (its graph cache skips AOT mode), and the suite's runs, scripts and loaders build the same few
programs' packages again and again, in folders of their own (docs/maintainers.md, "The harness's own tests"). ccache
cannot take these calls (a precompiled header, compile and link in one call). The harness itself never uses this:
only the suite's processes have CXX pointing here.

A call is kept when it writes one output (`-o X.o` or `-o X.so`) and is not a header's precompilation or a
preprocessing: its key is the compiler's own identity, every argument, each argument that names a file replaced by
that file's content (sources, objects, the precompiled header's stub, whose name torch derives from its content,
flags and compiler), and the environment variables the compiler reads. A hit copies the kept output into place; a
miss runs the real compiler and keeps what it wrote when it succeeds. Anything unexpected runs the real compiler.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

CACHE_VARIABLE = "TCM_SUITE_COMPILER_CACHE"  # the folder the outputs are kept in, for one suite run
REAL_VARIABLE = "TCM_SUITE_REAL_CXX"  # the compiler this stands for (tests/conftest.py finds it on PATH)
COMPILER_ENVIRONMENT = ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH", "LIBRARY_PATH", "COMPILER_PATH",
                        "GCC_EXEC_PREFIX", "SOURCE_DATE_EPOCH", "LANG", "LC_ALL")
KEPT_SUFFIXES = (".o", ".so")
NOT_KEPT_FLAGS = ("-E", "-M", "-MM", "-fsyntax-only")  # preprocessing, dependencies: no object comes out
ARTIFACT_KEY = "v1"  # change to drop every kept output (the key's recipe changed)


def cache_key(arguments: list[str], real: str, environment: dict[str, str]) -> tuple[str, str] | None:
    """(key, output path) of a call whose output may be kept; None for any other call."""
    if "-o" not in arguments or arguments.count("-o") != 1 or any(flag in arguments for flag in NOT_KEPT_FLAGS):
        return None
    output_at = arguments.index("-o") + 1
    if output_at >= len(arguments) or not arguments[output_at].endswith(KEPT_SUFFIXES):
        return None
    if "-x" in arguments and "c++-header" in arguments:  # a precompiled header: pass it through
        return None
    digest = hashlib.sha256()
    compiler = os.path.realpath(real)
    status = os.stat(compiler)
    parts: list[object] = [ARTIFACT_KEY, compiler, status.st_size, status.st_mtime_ns,
                           [(name, environment.get(name)) for name in COMPILER_ENVIRONMENT]]
    for position, argument in enumerate(arguments):
        if position == output_at:
            parts.append("<output>" + os.path.splitext(argument)[1])
        elif os.path.isfile(argument):  # by its content: a source's path differs from one cache folder to the next
            named = argument if position > 0 and arguments[position - 1] == "-include" else ""  # torch names it by content
            parts.append(f"<file {named} {_file_digest(argument)}>")
        else:
            parts.append(argument)
    digest.update(json.dumps(parts).encode())
    return digest.hexdigest(), arguments[output_at]


def _file_digest(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _copy_atomically(source: str, target: str) -> None:
    partial = f"{target}.{os.getpid()}.partial"
    shutil.copyfile(source, partial)
    shutil.copymode(source, partial)
    os.replace(partial, target)


def main(arguments: list[str]) -> int:
    real = os.environ.get(REAL_VARIABLE, "")
    cache = os.environ.get(CACHE_VARIABLE, "")
    if not real:
        print(f"{__file__}: {REAL_VARIABLE} names no compiler", file=sys.stderr)
        return 2
    keyed = cache_key(arguments, real, dict(os.environ)) if cache else None
    if keyed is None:
        return subprocess.call([real, *arguments])
    key, output = keyed
    kept = os.path.join(cache, key[:2], key + os.path.splitext(output)[1])
    if os.path.isfile(kept):
        _copy_atomically(kept, output)
        return 0
    code = subprocess.call([real, *arguments])
    if code == 0 and os.path.isfile(output):
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        _copy_atomically(output, kept)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
