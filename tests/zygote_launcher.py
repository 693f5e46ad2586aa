"""A stand-in for `python` that has a run's zygote, or a cell's process in process isolation, forked by the suite's
zygote maker (tests/zygote_maker.py).

Why: each run's zygote and each process-isolation cell is a new Python that imports torch, Dynamo and Inductor
(3.5 to 5 CPU seconds on two cores), and the suite starts about 50 of each (docs/maintainers.md, "The harness's own
tests"). The harness starts them with the command lines that TCM_ZYGOTE_PYTHON and TCM_CELL_PYTHON name
(harness.run.startup.command_lines); tests/harness_commands.py names this script in both for the commands it forks.

Run as `python -I -S zygote_launcher.py SOCKET -m MODULE ARGS...`. It hands its stdin, stdout and stderr, its
environment, its folder and its arguments to the maker listening on SOCKET, which forks the process from one that did
the zygote's warm-up once (with the same environment but for the variables named in zygote_maker.py), and it stays as
the process's stand-in: the pid the harness recorded is this one, so it passes SIGTERM, SIGINT and SIGHUP on and
leaves with the process's exit status (a signal as the same signal). When the maker refuses (another environment) or
is not there, it becomes that new Python (exec), as the harness would have started it. All of that is the harness's
own stand-in for an xdist worker (harness.run.startup.zygote_python.stand_in), loaded by its path: the standard library only,
so that it starts in milliseconds.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

REQUEST = b"Z"  # tests/zygote_maker.py's


def _zygote_python() -> ModuleType:
    """harness/run/startup/zygote_python.py, loaded by its path: this process runs isolated, with nothing of ours on its path.
    Its `stand_in` is what the harness's stand-in for an xdist worker does, for any server that forks."""
    path = Path(__file__).resolve().parents[1] / "harness" / "run" / "startup" / "zygote_python.py"
    spec = importlib.util.spec_from_file_location("zygote_python", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    address, python_args = argv[0], argv[1:]
    request = {"env": dict(os.environ), "cwd": os.getcwd(), "python_args": python_args}
    kind = "zygote" if "harness.run.startup.loader_zygote" in python_args else "process"
    return _zygote_python().stand_in(address, REQUEST, request, python_args, "zygote_launcher",
                                     server="zygote maker", child_kind=kind)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
