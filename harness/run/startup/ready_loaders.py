"""The zygote's loaders forked ahead (harness.run.startup.loader_zygote): on the GPU tier it keeps loaders forked before
their request, each with its CUDA context made, waiting for one (`ReadyLoaders`).

Why: the driver makes contexts one at a time, and beside 16 busy workers each takes about 0.4 s of it, so a loader
forked at its request waited seconds for its context in the run's round-trip phase (docs/maintainers.md,
"Isolation"). A ready loader is as fresh as one forked at the request: forked from the same zygote, used once, no
kernel module imported; it only made its context earlier, with the CUDA environment (`CUDA_PREFIXES`) of the request
it was forked for, which is its key.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from typing import Any

from harness.run.startup.zygote_children import fork_child, loader_child, take_environment

READY_VARIABLE = "TCM_READY_LOADERS"  # loaders kept forked ahead per CUDA environment; unset: READY_BY_TIER
READY_BY_TIER = {"gpu": 8, "cpu": 0}  # the CPU tier has no context to make ahead (docs/maintainers.md, "Isolation")
CUDA_PREFIXES = ("CUDA_", "PYTORCH_", "NVIDIA_")  # what a CUDA context is made with: a ready loader's key
READY_SIGNAL = b"R"  # a loader forked ahead says its context is made
NO_CONTEXT_SIGNAL = b"N"  # a loader forked ahead says its context could not be made: its environment gets no more


def cuda_environment(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """What a CUDA context is made with: a ready loader serves only requests whose environment has the same."""
    return tuple(sorted((name, value) for name, value in env.items() if name.startswith(CUDA_PREFIXES)))


def ready_count(tier: str) -> int:
    """How many loaders to keep forked ahead per CUDA environment (READY_VARIABLE, else READY_BY_TIER)."""
    try:
        return max(0, int(os.environ.get(READY_VARIABLE, READY_BY_TIER.get(tier, 0))))
    except ValueError:
        return READY_BY_TIER.get(tier, 0)


def ready_child(template: dict[str, str], channel: socket.socket, tier: str) -> int:
    """In a loader forked ahead: make the CUDA context (GPU tier), say so with one byte, then wait for a request and
    run it. A request may have come while the context was being made (`ReadyLoaders.take`): it is run all the same.
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
    return loader_child(json.loads(line))


@dataclass
class Ahead:
    pid: int
    channel: socket.socket  # the zygote's end: READY_SIGNAL comes on it, the request goes on it
    key: tuple[tuple[str, str], ...]
    ready: bool = False  # its context is made


class ReadyLoaders:
    """Loaders forked ahead, `count` per CUDA environment seen in a request: `take` hands a ready one a request,
    `refill` forks what is missing, `heard` marks those that said they are ready, `close` ends them all."""

    def __init__(self, count: int, tier: str) -> None:
        self.count, self.tier = count, tier
        self.ahead: list[Ahead] = []
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

    def _fork(self, key: tuple[tuple[str, str], ...], template: dict[str, str], inherited: list[socket.socket]) -> Ahead:
        ours, theirs = socket.socketpair()
        pid = fork_child([*inherited, ours], lambda: ready_child(template, theirs, self.tier))
        theirs.close()
        return Ahead(pid, ours, key)

    def ended(self, pid: int, status: int) -> None:
        """A loader forked ahead ended while it waited for a request (it was not handed one): its key is refused
        when it ended with an error."""
        code = os.waitstatus_to_exitcode(status)
        for entry in [entry for entry in self.ahead if entry.pid == pid]:
            self.ahead.remove(entry)
            entry.channel.close()
            if code != 0:
                self._refuse(entry, f"with {code} while it waited")

    def _refuse(self, entry: Ahead, how: str) -> None:
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
