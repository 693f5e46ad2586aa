"""The run's zygote: one process per run that imported torch and Inductor, ran Inductor's CPU ISA probe, and forks
fresh-process loaders and, in worker isolation (the default), the xdist workers themselves.

Why: on torch 2.11 a new Python that loads an AOTInductor package first pays `import torch` and then
Inductor's CPU ISA probe, which `aoti_load_package` runs (10 child Pythons that import torch; about
27 s per load on the H100, docs/maintainers.md); a new xdist worker pays the same
before its first compile. `aoti_fresh_process` asks whether a package runs in a process that never
imported the kernel's module; forking each loader from one process that did those two things once,
never touched CUDA and never imported a kernel module, keeps that question and drops the repeated cost.
The loader child is `harness.domain.pipelines.aoti_loader.main`, as in a new Python; its report still lists any kernel
module it finds imported. A worker child runs the code xdist would give a new Python
(harness.run.startup.zygote_children.worker_child, asked for by harness.run.startup.zygote_python).

- Server: `python -m harness.run.startup.loader_zygote DIR OWNER_PID TIER`. It binds DIR/zygote.sock first (clients
  may connect while it warms up), leaves when OWNER_PID is gone and its children have ended. A request is
  one byte (`L` a loader, `W` a worker, which carries its stdin, stdout and stderr) and one JSON line; the
  answer to a loader is one JSON line `{"returncode": N, "timed_out": bool, "pid": P, "ready": bool, "reaped_at": T}`
  (N < 0: the signal that ended it; `ready`: a loader forked ahead took it; T: time.time() when it was seen to
  end); a worker's caller first gets `{"pid": P}`, then the same line when the worker ends.
- Its parts, each a module of its own: the warm-up (harness.run.startup.zygote_warmup), the children it forks
  (harness.run.startup.zygote_children), the loaders it keeps forked ahead on the GPU tier (harness.run.startup.ready_loaders),
  and the client's side, which makes its folder, starts it, asks it for loaders and ends it
  (harness.run.startup.zygote_client). This module is the server's loop.
A child replaces its environment with the caller's (its GPU pin, its caches) before it does anything;
torch itself was imported with the environment of the process that started the zygote. Python warns that
the zygote is multi-threaded when it forks: after `import torch` it has one native thread besides its own
(seen on the CPU tier and on the GPUs); no fork has hung on it in the GPU runs or the tests.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.process_exit import exit_without_final_collection
from harness.run.run_folders import process_alive
from harness.run.startup.aoti_header import start_building_header
from harness.run.startup.ready_loaders import ReadyLoaders, ready_count
from harness.run.startup.zygote_children import fork_at_request, fork_is_clean
from harness.run.startup.zygote_python import SOCKET, WORKER_REQUEST  # the stand-in defines them: it imports nothing else of ours
from harness.run.startup.zygote_warmup import record_warmup, warm_up


def _send(connection: socket.socket, answer: dict[str, Any], close: bool = True) -> None:
    try:
        connection.sendall((json.dumps(answer) + "\n").encode())
    except OSError:
        pass  # the client gave up; nothing to tell
    if close:
        connection.close()


def _read_request(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """A request: its kind (one byte, with the worker's three descriptors), then one JSON line."""
    kind, descriptors, _, _ = socket.recv_fds(connection, 1, 3)
    try:
        request = json.loads(connection.makefile("rb").readline())
        request["kind"] = "worker" if kind == WORKER_REQUEST else "loader"
        if request["kind"] == "worker" and len(descriptors) != 3:
            raise ValueError("a worker request carries stdin, stdout and stderr")
    except (OSError, ValueError, TypeError):
        for descriptor in descriptors:  # a bad request: the zygote keeps none of its descriptors
            os.close(descriptor)
        raise ValueError("a malformed request") from None
    return request, descriptors


def went_away(client: socket.socket) -> bool:
    """For a caller that only ever waits (a worker's stand-in, harness.run.startup.zygote_python; the suite's zygote maker's
    stand-ins): a readable connection means it closed."""
    try:
        return not client.recv(1)
    except OSError:
        return True


@dataclass
class _Running:
    client: socket.socket
    deadline: float
    worker: bool
    forked_ahead: bool = False  # a ready loader (ReadyLoaders) runs it


def serve(directory: Path, owner_pid: int, tier: str) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temporary = directory / f"{SOCKET}.{os.getpid()}"
    listener.bind(str(temporary))
    listener.listen(256)
    os.replace(temporary, directory / SOCKET)  # clients connect now; they are answered after the warm-up
    started = time.time()
    warm_up(tier)
    # Only the GPU tier needs CUDA in a forked child: on the CPU tier a CUDA build of torch without a GPU may mark
    # the fork bad, and refusing to fork there would stop every run (docs/maintainers.md, "Isolation").
    if tier == "gpu" and not fork_is_clean():
        print("the warm-up started CUDA: a forked child could not use it; nothing is forked", flush=True)
        return
    if tier == "gpu":  # its child is reaped with the loaders forked ahead (ReadyLoaders.ended ignores it)
        start_building_header("cuda")
    record_warmup(directory, started, time.time())
    print(f"zygote {os.getpid()} ready: torch and Inductor imported, CPU ISA probed", flush=True)
    ready = ReadyLoaders(ready_count(tier), tier)
    try:
        _serve_requests(listener, owner_pid, ready)
    finally:
        ready.close()  # on SIGTERM too (main turns it into SystemExit): no loader forked ahead outlives the zygote
    listener.close()


def _serve_requests(listener: socket.socket, owner_pid: int, ready: ReadyLoaders) -> None:
    """Answer requests until the owner is gone and every child running a request has ended."""
    running: dict[int, _Running] = {}  # child pid -> its client, its deadline, whether it is a worker
    killed: set[int] = set()
    while process_alive(owner_pid) or running:
        workers = {entry.client: pid for pid, entry in running.items() if entry.worker}
        unheard = ready.unheard()
        readable, _, _ = select.select([listener, *workers, *unheard], [], [], 0.2)
        for channel in (channel for channel in readable if channel in unheard):
            ready.heard(channel)
        for client in (client for client in readable if client in workers):
            if went_away(client) and workers[client] not in killed:
                os.kill(workers[client], signal.SIGKILL)  # its caller (zygote_python, the stand-in) is gone: so is the worker
                killed.add(workers[client])
        if listener in readable and process_alive(owner_pid):
            connection, _ = listener.accept()
            connection.settimeout(30)
            try:
                request, descriptors = _read_request(connection)
            except (OSError, ValueError):
                connection.close()
                continue
            worker = request["kind"] == "worker"
            others = [listener, connection] + [entry.client for entry in running.values()] + ready.channels()
            taken = None if worker else ready.take(request)
            pid = taken if taken is not None else fork_at_request(request, descriptors, others)
            running[pid] = _Running(connection, float("inf") if worker else time.monotonic() + float(request["timeout_s"]),
                                    worker, forked_ahead=taken is not None)
            if worker:
                _send(connection, {"pid": pid}, close=False)  # so that its caller can pass signals on
            ready.refill([listener] + [entry.client for entry in running.values()])
        now = time.monotonic()
        for pid, entry in running.items():
            if now > entry.deadline and pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in running:
                entry = running.pop(pid)
                _send(entry.client, {"returncode": os.waitstatus_to_exitcode(status), "timed_out": pid in killed,
                                     "pid": pid, "ready": entry.forked_ahead, "reaped_at": time.time()})
                killed.discard(pid)
            else:
                ready.ended(pid, status)


def main(argv: list[str]) -> int:
    directory, owner_pid, tier = Path(argv[0]), int(argv[1]), argv[2]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        serve(directory, owner_pid, tier)
    finally:
        (directory / SOCKET).unlink(missing_ok=True)
        if not process_alive(owner_pid):  # its run was killed before it could remove the folder: nobody else will
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        exit_code = main(sys.argv[1:])
    except SystemExit as request:  # SIGTERM's handler: the run is over, and its controller waits for this process
        exit_code = request.code if isinstance(request.code, int) else 0
    exit_without_final_collection(exit_code)
