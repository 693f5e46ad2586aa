"""The run's zygote: one process per run that imported torch and Inductor, ran Inductor's CPU ISA probe, and forks
fresh-process loaders and, in worker isolation (the default), the xdist workers themselves.

Why: on torch 2.11 a new Python that loads an AOTInductor package first pays `import torch` and then
Inductor's CPU ISA probe, which `aoti_load_package` runs (10 child Pythons that import torch; about
27 s per load on the H100, docs/maintainers.md); a new xdist worker pays the same
before its first compile. `aoti_fresh_process` asks whether a package runs in a process that never
imported the kernel's module; forking each loader from one process that did those two things once,
never touched CUDA and never imported a kernel module, keeps that question and drops the repeated cost.
The loader child is `harness.domain.pipelines.aoti_loader.main`, as in a new Python; its report still lists any kernel
module it finds imported. A worker child runs the code xdist would give a new Python (`_worker_child`,
asked for by harness.run.zygote_python).

- Server: `python -m harness.run.loader_zygote DIR OWNER_PID TIER`. It binds DIR/zygote.sock first (clients
  may connect while it warms up), leaves when OWNER_PID is gone and its children have ended. A request is
  one byte (`L` a loader, `W` a worker, which carries its stdin, stdout and stderr) and one JSON line; the
  answer to a loader is one JSON line `{"returncode": N, "timed_out": bool, "pid": P, "ready": bool, "reaped_at": T}`
  (N < 0: the signal that ended it; `ready`: a loader forked ahead took it; T: time.time() when it was seen to
  end); a worker's caller first gets `{"pid": P}`, then the same line when the worker ends.
- Ready loaders: on the GPU tier the zygote keeps loaders forked ahead, each with its CUDA context made, waiting
  for a request (`_ReadyLoaders`). Why: the driver makes contexts one at a time, and beside 16 busy workers each
  takes about 0.4 s of it, so a loader forked at its request waited seconds for its context in the run's
  round-trip phase (docs/maintainers.md, "Isolation"). A ready loader is as fresh as one forked at the request:
  forked from the same zygote, used once, no kernel module imported; it only made its context earlier, with the
  CUDA environment (`CUDA_PREFIXES`) of the request it was forked for, which is its key.
- Client: `run_loader(DIR, OWNER_PID, TIER, MODULE, argv, env, timeout_s, log)`, which starts the zygote if none is
  alive (under a file lock: many workers may ask at once).
- The controller makes DIR (`make_loader_dir`), starts the zygote itself when workers are to be forked from
  it, and ends it (`stop`, which also waits for it when this process started it).
A child replaces its environment with the caller's (its GPU pin, its caches) before it does anything;
torch itself was imported with the environment of the process that started the zygote. Python warns that
the zygote is multi-threaded when it forks: after `import torch` it has one native thread besides its own
(seen on the CPU tier and on the GPUs); no fork has hung on it in the GPU runs or the tests.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.process_exit import exit_without_final_collection
from harness.run.aoti_header import start_building_header
from harness.run.caches import isa_probes_folder, keep_isa_probes, probe_outputs, seed_isa_probes
from harness.run.environment import CPU_THREADS_VARIABLE, enter_tier
from harness.run.python_command import ZYGOTE_PYTHON_VARIABLE, python_command
from harness.run.run_folders import ZYGOTE_PID_FILE, mark_owner, process_alive, zygote_pid
from harness.run.warm_imports import warm_imports
from harness.run.zygote_python import SOCKET, WORKER_REQUEST  # the stand-in defines them: it imports nothing else of ours

PID_FILE, LOCK, LOG = ZYGOTE_PID_FILE, "start.lock", "zygote.log"
WARMUP_FILE = "warmup.json"  # how long the warm-up took and when it ended, for the run's header
LOADER_DIR_VARIABLE, LOADER_OWNER_VARIABLE = "TCM_LOADER_DIR", "TCM_LOADER_OWNER"  # set by the plugin in a zygote run
START_TIMEOUT_S = 60.0  # from starting the zygote to its socket being there (it binds before importing torch)
LOADER_REQUEST = b"L"  # a request's first byte; a worker's is WORKER_REQUEST and carries its stdin, stdout and stderr
REPLY_GRACE_S = 600.0  # past the loader's own limit (the warm-up counts in the first); the cell's limit comes first
LOG_TAIL_CHARS = 300
NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"
READY_VARIABLE = "TCM_READY_LOADERS"  # loaders kept forked ahead per CUDA environment; unset: READY_BY_TIER
READY_BY_TIER = {"gpu": 8, "cpu": 0}  # the CPU tier has no context to make ahead (docs/maintainers.md, "Isolation")
CUDA_PREFIXES = ("CUDA_", "PYTORCH_", "NVIDIA_")  # what a CUDA context is made with: a ready loader's key
READY_SIGNAL = b"R"  # a loader forked ahead says its context is made
NO_CONTEXT_SIGNAL = b"N"  # a loader forked ahead says its context could not be made: its environment gets no more
FORKED_AHEAD = "zygote, forked ahead"  # FreshRun.how of a loader that made its CUDA context before its request
SOCKET_PATH_LIMIT = 107  # AF_UNIX's sun_path on Linux holds 108 bytes, the last one a NUL


class ZygoteUnavailable(RuntimeError):
    """No zygote answered; the message carries the tail of its log."""


@dataclass
class LoaderRun:
    returncode: int
    timed_out: bool
    zygote_pid: int
    forked_ahead: bool = False  # a ready loader took it: forked, and its CUDA context made, before the request
    pid: int | None = None  # the loader's own
    reaped_at: float | None = None  # time.time() when the zygote saw it end


# ---- the controller's side ----

def make_loader_dir() -> Path:
    """A fresh folder for this run's zygote, in /tmp when the temporary folder's path is too long for a socket's."""
    parent = tempfile.gettempdir()
    if len(os.path.join(parent, "tcm-loader-12345678", f"{SOCKET}.{'9' * 10}")) > SOCKET_PATH_LIMIT:
        parent = "/tmp"
    directory = Path(tempfile.mkdtemp(prefix="tcm-loader-", dir=parent))
    mark_owner(directory)  # a later run removes it if this run is killed with its zygote (harness.run.run_folders)
    return directory


def stop(directory: Path) -> None:
    """End this run's zygote, if one started, and remove its folder."""
    pid = zygote_pid(directory)
    if pid is not None:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        _reap(pid)
    shutil.rmtree(directory, ignore_errors=True)


def _reap(pid: int, timeout_s: float = 30.0) -> None:
    """Wait for the zygote when this process started it: its CPU time (the forked workers' and loaders' with it)
    then counts in this process's children's, which is what `harness bench` measures."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] != 0:
                return
        except ChildProcessError:  # another process started it (a worker, for its loads): nothing to wait for
            return
        time.sleep(0.05)


# ---- the client's side ----

def _log_tail(directory: Path) -> str:
    try:
        text = (directory / LOG).read_text(errors="replace").strip()
    except OSError:
        return ""
    return text[-LOG_TAIL_CHARS:].replace("\n", " | ")


def ensure_started(directory: Path, owner_pid: int, tier: str) -> int:
    """The pid of this run's zygote; starts it when none is alive. Safe to call from many processes at once."""
    with open(directory / LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pid = zygote_pid(directory)
        if pid is not None and process_alive(pid) and (directory / SOCKET).exists():
            return pid
        (directory / SOCKET).unlink(missing_ok=True)
        with open(directory / LOG, "a") as log:
            process = subprocess.Popen(
                [*python_command(ZYGOTE_PYTHON_VARIABLE), "-m", "harness.run.loader_zygote", str(directory), str(owner_pid),
                 tier],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives the (forked) cell that started it; the owner's end ends it
            )
        (directory / PID_FILE).write_text(str(process.pid))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (directory / SOCKET).exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise ZygoteUnavailable(f"the loader zygote did not start (exit {process.poll()}): {_log_tail(directory)}")
            time.sleep(0.05)
        return process.pid


def run_loader(directory: Path, owner_pid: int, tier: str, module: str, argv: list[str], env: dict[str, str],
               timeout_s: float, log: Path) -> LoaderRun:
    """Have the zygote fork a loader that runs `module`'s `main(argv)` and wait for its exit status.

    A zygote that died without removing its socket (killed) refuses the connection: it is started again, once."""
    job = {"module": module, "argv": argv, "env": env, "timeout_s": timeout_s, "log": str(log)}
    request = LOADER_REQUEST + (json.dumps(job) + "\n").encode()
    for attempt in (1, 2):
        pid = ensure_started(directory, owner_pid, tier)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout_s + REPLY_GRACE_S)
            try:
                connection.connect(str(directory / SOCKET))
            except ConnectionRefusedError:
                if attempt == 1:
                    (directory / SOCKET).unlink(missing_ok=True)  # so that ensure_started starts a new one
                    continue
                raise ZygoteUnavailable(f"the loader zygote (pid {pid}) refused the connection: "
                                        f"{_log_tail(directory)}") from None
            try:
                connection.sendall(request)
                reply = connection.makefile("r").readline()
            except OSError as exc:
                raise ZygoteUnavailable(f"the loader zygote (pid {pid}) did not answer: {type(exc).__name__}: "
                                        f"{exc}; {_log_tail(directory)}") from None
        if not reply:
            raise ZygoteUnavailable(f"the loader zygote (pid {pid}) closed without an answer: {_log_tail(directory)}")
        answer = json.loads(reply)
        return LoaderRun(int(answer["returncode"]), bool(answer["timed_out"]), pid, bool(answer.get("ready", False)),
                         answer.get("pid"), answer.get("reaped_at"))
    raise AssertionError("unreachable")


# ---- the zygote ----

def warm_up(tier: str) -> None:
    """What every fresh loader and worker would do first, done once: import torch, Inductor and the harness's
    pipelines, and run Inductor's CPU ISA probe, leaving CUDA untouched.

    The probe imports torch.utils.cpp_extension, which asks `torch.cuda.is_available()`; asked the usual way that
    initialises the CUDA driver, and no child forked afterwards could use CUDA ("Cannot re-initialize CUDA in
    forked subprocess"). So the warm-up asks NVML instead (PYTORCH_NVML_BASED_CUDA_CHECK, same answer, no
    driver), and `_fork_is_clean` proves it before any loader is forked. Under that check, importing Inductor's
    compiler does not start CUDA either; each worker would otherwise import it before its first cell (measured:
    docs/maintainers.md, "Isolation").
    The ISA candidates are probed at once while the imports run (`_probe_vec_isas`), from outputs kept by the runs
    before (harness.run.caches.isa_probes_folder): on a machine that ran before, the probe compiles nothing, it only
    loads them (docs/maintainers.md, "Isolation").
    """
    enter_tier(tier)
    saved = os.environ.get(NVML_CHECK)
    os.environ[NVML_CHECK] = "1"
    try:
        import torch._inductor.package  # noqa: F401  (what aoti_load_package imports)
        from torch._inductor.cpu_vec_isa import pick_vec_isa
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        kept = isa_probes_folder(torch.__version__)
        inductor_cache = Path(cache_dir())  # TORCHINDUCTOR_CACHE_DIR: the controller's, in the run's folder
        seed_isa_probes(kept, inductor_cache)
        before = probe_outputs(inductor_cache)
        with _probe_vec_isas():
            import harness.domain.pipelines  # noqa: F401  # deferred: imports torch, under the NVML check
            from harness.domain.pipelines import aoti_loader, export_loader  # noqa: F401  # deferred: the loaders' modules, under the NVML check
            warm_imports()
        pick_vec_isa()  # functools-cached per process: every forked loader inherits the answer
        keep_isa_probes(inductor_cache, kept, before)
    finally:
        if saved is None:
            os.environ.pop(NVML_CHECK, None)
        else:
            os.environ[NVML_CHECK] = saved


def warm_cpu_isa() -> None:
    """Inductor's CPU ISA probe, its candidates compiled at once: what a process about to build with
    AOTInductor pays first (`harness perf` asks it before timing a first call). Cached per process."""
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    with _probe_vec_isas():
        pass
    pick_vec_isa()


@contextlib.contextmanager
def _probe_vec_isas() -> Iterator[None]:
    """Inductor's ISA probe, each candidate in a thread of its own, while the body runs; joined at the end.

    `pick_vec_isa` tries the CPU's candidate ISAs one after another, each a C++ compile and a child Python
    (torch <= 2.11: one that imports torch); asked at once they take a third of that time with the same answer
    (docs/maintainers.md, "Isolation"); each answer is cached on its candidate, so `pick_vec_isa` only reads them.
    The candidates are those `valid_vec_isa_list` would try on this CPU; where that cannot be told (another
    architecture, another torch), nothing is asked ahead and `pick_vec_isa` probes as it always did.
    """
    candidates = _vec_isa_candidates()
    if not candidates:
        yield
        return
    with concurrent.futures.ThreadPoolExecutor(len(candidates), thread_name_prefix="isa-probe") as pool:
        for candidate in candidates:
            pool.submit(bool, candidate)
        yield
    # leaving the pool joined its threads: none is left when the zygote forks


def _vec_isa_candidates() -> list[Any]:
    import platform

    try:
        from torch._inductor import cpu_vec_isa

        if sys.platform != "linux" or platform.machine() != "x86_64":
            return []
        flags = cpu_vec_isa.x86_isa_checker()
        return [isa for isa in cpu_vec_isa.supported_vec_isa_list if all(flag in flags for flag in str(isa).split())]
    except (ImportError, AttributeError):
        return []


def _record_warmup(directory: Path, started: float, ready: float) -> None:
    """The warm-up is serial time before any worker it forks can start: a run's header says how long it took."""
    write_text_atomic(directory / WARMUP_FILE, json.dumps({"warmup_s": round(ready - started, 3), "ready_at": round(ready, 3)}))


def read_warmup(directory: Path) -> dict[str, float] | None:
    """What `_record_warmup` wrote, or None when no zygote of this run has finished its warm-up."""
    try:
        return json.loads((directory / WARMUP_FILE).read_text())
    except (OSError, ValueError):
        return None


def _fork_is_clean() -> bool:
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


def _loader_child(request: dict[str, Any]) -> int:
    """In a forked loader: the caller's environment and log, then the loader itself."""
    take_environment(request["env"])
    descriptor = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    import importlib

    return importlib.import_module(request["module"]).main(request["argv"])


def _worker_child(request: dict[str, Any], descriptors: list[int]) -> int:
    """In a forked xdist worker: what `python -u -c CODE` would be, started by the caller (harness.run.zygote_python).

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


def _fork_child(inherited: list[socket.socket], body: Callable[[], int]) -> int:
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


def _fork(request: dict[str, Any], descriptors: list[int], inherited: list[socket.socket]) -> int:
    """A worker or a loader forked at its request; `inherited`: the listener and every client, its own included."""
    worker = request.get("kind") == "worker"
    pid = _fork_child(inherited, lambda: _worker_child(request, descriptors) if worker else _loader_child(request))
    for descriptor in descriptors:
        os.close(descriptor)
    return pid


def cuda_environment(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """What a CUDA context is made with: a ready loader serves only requests whose environment has the same."""
    return tuple(sorted((name, value) for name, value in env.items() if name.startswith(CUDA_PREFIXES)))


def ready_count(tier: str) -> int:
    """How many loaders to keep forked ahead per CUDA environment (READY_VARIABLE, else READY_BY_TIER)."""
    try:
        return max(0, int(os.environ.get(READY_VARIABLE, READY_BY_TIER.get(tier, 0))))
    except ValueError:
        return READY_BY_TIER.get(tier, 0)


def _ready_child(template: dict[str, str], channel: socket.socket, tier: str) -> int:
    """In a loader forked ahead: make the CUDA context (GPU tier), say so with one byte, then wait for a request and
    run it. A request may have come while the context was being made (`_ReadyLoaders.take`): it is run all the same.
    A context that could not be made is said with NO_CONTEXT_SIGNAL: the zygote then forks at each request for that
    environment, as without ready loaders, and closes the channel, which ends this loader unless it was handed a
    request already (the loader then meets the error itself, as one forked at the request would). The zygote
    closing the channel with no request (it is leaving) ends it."""
    take_environment(template)
    said = READY_SIGNAL
    if tier == "gpu":
        import torch

        try:
            torch.cuda.init()
            torch.cuda.synchronize()  # the runtime makes the primary context here
        except Exception:  # noqa: BLE001  (the loader, if handed a request already, meets the error itself, with its evidence)
            said = NO_CONTEXT_SIGNAL
    try:
        channel.sendall(said)
    except OSError:  # the zygote closed its end: it handed this loader a request while the context was being made, or it left
        pass
    try:
        line = channel.makefile("rb").readline()  # a request sent before the zygote closed its end is still here
    except OSError:
        return 0
    channel.close()
    if not line:
        return 0
    return _loader_child(json.loads(line))


@dataclass
class _Ahead:
    pid: int
    channel: socket.socket  # the zygote's end: READY_SIGNAL comes on it, the request goes on it
    key: tuple[tuple[str, str], ...]
    ready: bool = False  # its context is made


class _ReadyLoaders:
    """Loaders forked ahead, `count` per CUDA environment seen in a request: `take` hands a ready one a request,
    `refill` forks what is missing, `heard` marks those that said they are ready, `close` ends them all."""

    def __init__(self, count: int, tier: str) -> None:
        self.count, self.tier = count, tier
        self.ahead: list[_Ahead] = []
        self.templates: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        self.refused: set[tuple[tuple[str, str], ...]] = set()  # a loader could not make its context there

    def channels(self) -> list[socket.socket]:
        return [entry.channel for entry in self.ahead]

    def unheard(self) -> list[socket.socket]:
        return [entry.channel for entry in self.ahead if not entry.ready]

    def heard(self, channel: socket.socket) -> None:
        for entry in self.ahead:
            if entry.channel is channel:
                try:
                    entry.ready = channel.recv(1) == READY_SIGNAL
                except OSError:
                    entry.ready = False
                if not entry.ready:  # no context: it said so (closing the channel ends it), or it ended (reaped as any child)
                    channel.close()
                    self.ahead.remove(entry)
                    self._refuse(entry, "without its context made")
                return

    def take(self, request: dict[str, Any]) -> int | None:
        """The pid of a loader forked ahead now running `request`, or None (none forked ahead for its CUDA environment).

        A ready one if there is one; else the one forked longest ago, still making its context: the driver makes
        contexts one at a time, so its context comes sooner than that of a loader forked now, which would wait
        behind it (docs/maintainers.md, "Isolation")."""
        if self.count == 0:
            return None
        key = cuda_environment(request["env"])
        self.templates.setdefault(key, dict(request["env"]))
        forked_for_it = [entry for entry in self.ahead if entry.key == key]  # in the order they were forked
        for entry in sorted(forked_for_it, key=lambda entry: not entry.ready):
            self.ahead.remove(entry)
            try:
                entry.channel.sendall((json.dumps(request) + "\n").encode())
            except OSError:  # it died after saying it was ready; its exit is reaped as any child's
                continue
            finally:
                entry.channel.close()
            return entry.pid
        return None

    def refill(self, inherited: list[socket.socket]) -> None:
        for key, template in self.templates.items():
            while key not in self.refused and sum(entry.key == key for entry in self.ahead) < self.count:
                self.ahead.append(self._fork(key, template, inherited + self.channels()))

    def _fork(self, key: tuple[tuple[str, str], ...], template: dict[str, str], inherited: list[socket.socket]) -> _Ahead:
        ours, theirs = socket.socketpair()
        pid = _fork_child([*inherited, ours], lambda: _ready_child(template, theirs, self.tier))
        theirs.close()
        return _Ahead(pid, ours, key)

    def ended(self, pid: int, status: int) -> None:
        """A loader forked ahead ended while it waited for a request (it was not handed one): its key is refused
        when it ended with an error."""
        code = os.waitstatus_to_exitcode(status)
        for entry in [entry for entry in self.ahead if entry.pid == pid]:
            self.ahead.remove(entry)
            entry.channel.close()
            if code != 0:
                self._refuse(entry, f"with {code} while it waited")

    def _refuse(self, entry: _Ahead, how: str) -> None:
        """Each request of `entry`'s CUDA environment gets a loader forked at it from now on."""
        if entry.key not in self.refused:
            self.refused.add(entry.key)
            print(f"a loader forked ahead ({entry.pid}) ended {how}: each request for its CUDA environment gets a "
                  "loader forked at it from now on", flush=True)

    def close(self) -> None:
        """The zygote leaves: each waiting loader reads its closed channel and ends; they are waited for."""
        for entry in self.ahead:
            entry.channel.close()
        for entry in self.ahead:
            try:
                os.waitpid(entry.pid, 0)
            except ChildProcessError:
                pass
        self.ahead.clear()


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
    """For a caller that only ever waits (a worker's stand-in, harness.run.zygote_python; the suite's zygote maker's
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
    forked_ahead: bool = False  # a ready loader (_ReadyLoaders) runs it


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
    if tier == "gpu" and not _fork_is_clean():
        print("the warm-up started CUDA: a forked child could not use it; nothing is forked", flush=True)
        return
    if tier == "gpu":  # its child is reaped with the loaders forked ahead (_ReadyLoaders.ended ignores it)
        start_building_header("cuda")
    _record_warmup(directory, started, time.time())
    print(f"zygote {os.getpid()} ready: torch and Inductor imported, CPU ISA probed", flush=True)
    ready = _ReadyLoaders(ready_count(tier), tier)
    try:
        _serve_requests(listener, owner_pid, ready)
    finally:
        ready.close()  # on SIGTERM too (main turns it into SystemExit): no loader forked ahead outlives the zygote
    listener.close()


def _serve_requests(listener: socket.socket, owner_pid: int, ready: _ReadyLoaders) -> None:
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
                os.kill(workers[client], signal.SIGKILL)  # its caller (harness.run.zygote_python) is gone: so is the worker
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
            pid = taken if taken is not None else _fork(request, descriptors, others)
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
