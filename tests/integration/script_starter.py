"""A Python that imported torch, Dynamo and Inductor once and forks each reproducer script of test_repro.py from it.

Why: the 42 scripts each began with `import torch` and the first compile's imports, seconds of CPU each on two
cores (docs/maintainers.md, "The harness's own tests"). This process imports what the harness's zygote imports
before it forks the worker that ran the cell (WARM_IMPORTS), so a script starts as its cell started. What a script
may not have, it still does not have: this process runs isolated (`python -I`: no PYTHONPATH, no user site, not
even its own folder on the path) from an empty folder with the environment the scripts get, and imports nothing of
the harness and no kernel. Those imports load triton, but not its interpreter's setting: each script sets
TRITON_INTERPRET itself before it defines a kernel, and triton reads it then. A forked script runs as
`python -I repro.py` would, from its own folder, with its own environment and caches, as `__main__` with its
absolute path as `__file__`, and ends with the status that Python would give it.

Protocol: one JSON line per script on stdin, `{"id", "folder", "env"}`; the script's stdout and stderr go to
`stdout.txt` and `stderr.txt` in its folder; on stdout, a line when each is forked and one when it has ended,
`{"id", "returncode", ...}` (negative: the signal that ended it), as tests/fork_server.py says. Closing stdin ends
this process once every script has ended.
Imports nothing of the harness (and cannot: the harness is not on its path).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import torch  # noqa: F401  (the import every script shares: the reason this process exists)

_AFTER_TORCH = frozenset(sys.modules)
# The harness's zygote's imports (harness.run.startup.warm_imports.WARM_IMPORTS, and the AOTInductor package module its loaders
# use); tests/unit/test_script_starter.py holds this list to them.
WARM_IMPORTS = ("torch._dynamo", "torch._inductor.compile_fx", "torch._inductor.package")
for _name in WARM_IMPORTS:
    importlib.import_module(_name)

STDOUT_FILE, STDERR_FILE = "stdout.txt", "stderr.txt"
# In this process's folder: the modules WARM_IMPORTS added, which `python -I repro.py` would not have after its
# `import torch`; test_repro.py holds each script to importing those it reaches by attribute.
WARM_ONLY_FILE = "warm_only.json"


def _run_script(request: dict) -> int:
    """In the forked child: become `python -I repro.py` started in the request's folder; the exit status."""
    import atexit
    import runpy
    import traceback

    os.chdir(request["folder"])
    os.environ.clear()
    os.environ.update(request["env"])
    for descriptor, name in ((1, STDOUT_FILE), (2, STDERR_FILE)):
        opened = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(opened, descriptor)
        os.close(opened)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    script = os.path.abspath("repro.py")
    sys.argv = [script]
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code is None:
            code = 0
        elif isinstance(exit_.code, int):
            code = exit_.code
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:  # as Python prints an uncaught exception, and its status
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _become_script(request: dict) -> NoReturn:
    code = 1
    try:
        code = _run_script(request)
    finally:
        os._exit(code)


def main() -> None:
    with open(WARM_ONLY_FILE, "w") as handle:
        json.dump(sorted(set(sys.modules) - _AFTER_TORCH), handle)
    _fork_server().serve(_become_script, poll_s=0.1)


def _fork_server() -> ModuleType:
    """tests/fork_server.py, loaded by its path: this process runs isolated, with nothing of the tests on its path."""
    path = Path(__file__).resolve().parents[1] / "fork_server.py"
    spec = importlib.util.spec_from_file_location("fork_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    main()
