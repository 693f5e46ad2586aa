"""The children the run's zygote (harness.run.startup.loader_zygote) forks: a loader or an xdist worker, each made into what
a new Python started with its caller's environment would be, and never returning into the zygote's loop.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from harness.run.environment import CPU_THREADS_VARIABLE


def fork_is_clean() -> bool:
    """Whether a child forked now may still start CUDA (torch marks a fork made after CUDA started as bad)."""
    pid = os.fork()
    if pid == 0:
        import torch

        os._exit(1 if torch.cuda._is_in_bad_fork() else 0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def take_environment(env: dict[str, str]) -> None:
    """A forked child becomes what a new Python started with `env` would be: that environment, and torch's CPU
    threads sized by its OMP_NUM_THREADS (torch.set_num_threads sets PyTorch's, OpenMP's and MKL's pools).

    Torch read that variable when the zygote imported it, and the zygote may have started before the run knew its
    worker count (harness.cli starts it ahead of loading the kernels), so without the run's share of the cores
    (harness.run.environment.share_cores). A child whose environment names no count keeps the zygote's, which
    then named none either: a run sets it for all its processes or for none."""
    os.environ.clear()
    os.environ.update(env)
    asked = env.get(CPU_THREADS_VARIABLE, "")
    if asked.isdigit() and int(asked) >= 1:
        import torch

        if torch.get_num_threads() != int(asked):
            torch.set_num_threads(int(asked))


def loader_child(request: dict[str, Any]) -> int:
    """In a forked loader: the caller's environment and log, then the loader itself."""
    take_environment(request["env"])
    descriptor = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    import importlib

    return importlib.import_module(request["module"]).main(request["argv"])


def worker_child(request: dict[str, Any], descriptors: list[int]) -> int:
    """In a forked xdist worker: what `python -u -c CODE` would be, started by the caller (harness.run.startup.zygote_python).

    Its stdin, stdout and stderr are the caller's (execnet's pipes), its environment and folder the caller's;
    the code runs as `__main__`, and the process ends as Python ends one: non-daemon threads joined, atexit run."""
    import atexit
    import builtins
    import io
    import threading

    for target, descriptor in enumerate(descriptors):
        os.dup2(descriptor, target)
        os.close(descriptor)
    take_environment(request["env"])
    os.chdir(request["cwd"])
    sys.argv = ["-c"]
    streams = {"stdin": io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False))),
               "stdout": io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True),  # -u
               "stderr": io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)}
    for name, stream in streams.items():  # sys.__stdout__ too, as in a new Python
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    code = 0
    try:
        exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exit_request:  # as Python treats it: None is 0, a message is printed and is 1
        code = exit_request.code if isinstance(exit_request.code, int) else (0 if exit_request.code is None else 1)
        if exit_request.code is not None and not isinstance(exit_request.code, int):
            print(exit_request.code, file=sys.stderr)
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()  # as Python ends: non-daemon threads joined first, then atexit
    return code


def fork_child(inherited: list[socket.socket], body: Callable[[], int]) -> int:
    """Fork a child that closes `inherited` (the zygote's sockets: the zygote answers them), takes SIGTERM's default
    and ends with `body()`'s code; the child's pid. Whatever happens, the child never returns into the server loop."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for other in inherited:
                other.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            code = body()
        except BaseException:  # noqa: B036  (whatever happens, this process must not return into the server loop)
            import traceback

            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    return pid


def fork_at_request(request: dict[str, Any], descriptors: list[int], inherited: list[socket.socket]) -> int:
    """A worker or a loader forked at its request; `inherited`: the listener and every client, its own included."""
    worker = request.get("kind") == "worker"
    pid = fork_child(inherited, lambda: worker_child(request, descriptors) if worker else loader_child(request))
    for descriptor in descriptors:
        os.close(descriptor)
    return pid
