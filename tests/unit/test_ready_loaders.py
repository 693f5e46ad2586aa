"""The zygote's loaders forked ahead (harness.run.startup.ready_loaders.ReadyLoaders): which one a request goes to, and a
loader handed its request while it was still making its CUDA context runs it. No process is forked here: the
entries are socket pairs standing in for loaders, and `ready_child` runs in this process with the loader stubbed."""

from __future__ import annotations

import json
import socket
import threading

from harness.run.startup import ready_loaders
from harness.run.startup.ready_loaders import READY_SIGNAL, Ahead, ReadyLoaders, cuda_environment

ENV = {"CUDA_VISIBLE_DEVICES": "0", "HOME": "/root"}


def _loaders(*ready: bool) -> tuple[ReadyLoaders, list[socket.socket]]:
    """Loaders forked ahead for ENV, in fork order, each ready or not; their own ends of the channels."""
    loaders = ReadyLoaders(count=len(ready), tier="gpu")
    loaders.templates[cuda_environment(ENV)] = dict(ENV)
    theirs = []
    for pid, is_ready in enumerate(ready, start=100):
        ours, their_end = socket.socketpair()
        loaders.ahead.append(Ahead(pid, ours, cuda_environment(ENV), ready=is_ready))
        theirs.append(their_end)
    return loaders, theirs


def _request(name: str) -> dict:
    return {"env": dict(ENV), "module": "m", "argv": [name], "log": "/dev/null", "timeout_s": 1.0}


def _received(channel: socket.socket) -> dict:
    return json.loads(channel.makefile("rb").readline())


def test_a_ready_loader_is_taken_before_older_ones_still_making_their_context():
    loaders, theirs = _loaders(False, True)
    assert loaders.take(_request("first")) == 101
    assert _received(theirs[1])["argv"] == ["first"]
    assert [entry.pid for entry in loaders.ahead] == [100]


def test_with_none_ready_the_one_forked_first_is_handed_the_request():
    loaders, theirs = _loaders(False, False)
    assert loaders.take(_request("early")) == 100, "its context comes before a loader forked now would get one"
    assert _received(theirs[0])["argv"] == ["early"]
    assert loaders.take(_request("next")) == 101
    assert loaders.ahead == []
    assert loaders.take(_request("none left")) is None, "then the zygote forks at the request"


def test_another_cuda_environment_takes_no_loader_forked_for_this_one():
    loaders, _ = _loaders(True)
    other = dict(_request("other"), env=dict(ENV, CUDA_VISIBLE_DEVICES="1"))
    assert loaders.take(other) is None
    assert len(loaders.ahead) == 1


def test_a_loader_handed_its_request_while_making_its_context_runs_it(monkeypatch):
    """The zygote wrote the request and closed its end before the loader said it was ready: saying so fails (the
    peer is gone), and the request is still there to read."""
    ours, theirs = socket.socketpair()
    ours.sendall((json.dumps(_request("early")) + "\n").encode())
    ours.close()
    ran = []
    monkeypatch.setattr(ready_loaders, "loader_child", lambda request: ran.append(request["argv"]) or 7)
    monkeypatch.setattr(ready_loaders.os, "environ", dict(ENV))  # ready_child replaces its environment
    assert ready_loaders.ready_child(dict(ENV), theirs, "cpu") == 7
    assert ran == [["early"]]


def test_a_loader_forked_ahead_that_is_never_handed_a_request_ends_when_the_zygote_closes_its_channel(monkeypatch):
    ours, theirs = socket.socketpair()
    monkeypatch.setattr(ready_loaders, "loader_child", lambda request: 7)
    monkeypatch.setattr(ready_loaders.os, "environ", dict(ENV))
    said = []

    def close_after_hearing() -> None:
        said.append(ours.recv(1))
        ours.close()

    listener = threading.Thread(target=close_after_hearing)
    listener.start()
    assert ready_loaders.ready_child(dict(ENV), theirs, "cpu") == 0
    listener.join()
    assert said == [READY_SIGNAL]
