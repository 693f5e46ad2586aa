"""A stand-in for `python` that has a run's zygote forked by the suite's zygote maker (tests/zygote_maker.py).

Why: each run's zygote is a new Python that imports torch, Dynamo and Inductor and runs Inductor's CPU ISA probe,
about 5 CPU seconds on two cores, and the suite starts about 50 of them (docs/maintainers.md, "The harness's own
tests"). The harness starts a zygote with the command line that TCM_ZYGOTE_PYTHON names
(harness.run.loader_zygote.zygote_python); tests/harness_commands.py names this script for the commands it forks.

Run as `python -I -S zygote_launcher.py SOCKET -m harness.run.loader_zygote ARGS...`. It hands its stdin, stdout and
stderr, its environment, its folder and its arguments to the maker listening on SOCKET, which forks the zygote from a
process that did that warm-up once (with the same environment but for the variables named in zygote_maker.py), and it
stays as the zygote's stand-in: the pid the harness recorded is this one, so it passes SIGTERM, SIGINT and SIGHUP on
and leaves with the zygote's exit status (a signal as the same signal). When the maker refuses (another environment)
or is not there, it becomes that new Python (exec), as the harness would have started it. All of that is the
harness's own stand-in for an xdist worker (harness.run.zygote_python.stand_in), loaded by its path: the standard
library only, so that it starts in milliseconds.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

REQUEST = b"Z"  # tests/zygote_maker.py's


def _zygote_python() -> ModuleType:
    """harness/run/zygote_python.py, loaded by its path: this process runs isolated, with nothing of ours on its path.
    Its `stand_in` is what the harness's stand-in for an xdist worker does, for any server that forks."""
    path = Path(__file__).resolve().parents[1] / "harness" / "run" / "zygote_python.py"
    spec = importlib.util.spec_from_file_location("zygote_python", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    address, python_args = argv[0], argv[1:]
    request = {"env": dict(os.environ), "cwd": os.getcwd(), "python_args": python_args}
    return _zygote_python().stand_in(address, REQUEST, request, python_args, "zygote_launcher",
                                     server="zygote maker", child_kind="zygote")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
