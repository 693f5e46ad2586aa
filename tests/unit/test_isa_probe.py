"""A process forked before the ISA prober answered waits for its answer, and probes itself only where none came
(harness.run.isa_probe)."""

import json
import threading
import time

from harness.run import isa_probe


class Candidate:
    """Stands in for one of torch's VecISA candidates: `check_build` is what `VecISA.__bool__` asks, with the flags
    `build_arch_flags` gives at the time (torch's AVX512 candidate adds one for its bf16 build)."""

    _avx_code = "the probe's code"

    def __init__(self, name: str, builds: bool) -> None:
        self.name, self.builds, self.built, self.flags = name, builds, [], "-mavx"

    def __str__(self) -> str:
        return self.name

    def build_arch_flags(self) -> str:
        return self.flags

    def check_build(self, code: str) -> bool:
        self.built.append(code)
        return self.builds


def _answer(tmp_path, *builds: tuple[Candidate, str, bool]) -> None:
    recorded = {isa_probe._build_key(candidate, code): built for candidate, code, built in builds}
    (tmp_path / isa_probe.ANSWER_FILE).write_text(json.dumps({"builds": recorded, "answered_at": 1.0}))


def test_a_deferred_candidate_waits_for_the_probers_answer_and_builds_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(isa_probe, "POLL_S", 0.01)
    candidate = Candidate("avx512", builds=False)
    isa_probe._defer(candidate, tmp_path / isa_probe.ANSWER_FILE)
    answers: list[bool] = []
    asking = threading.Thread(target=lambda: answers.append(candidate.check_build(Candidate._avx_code)))
    asking.start()
    time.sleep(0.2)
    assert answers == []  # still waiting
    _answer(tmp_path, (Candidate("avx512", builds=False), Candidate._avx_code, True))
    asking.join(10)
    assert answers == [True] and candidate.built == []


def test_each_build_gets_the_answer_of_the_same_build_and_one_the_prober_never_made_builds_here(tmp_path):
    answered = Candidate("avx512", builds=True)
    unanswered = Candidate("avx2", builds=True)
    _answer(tmp_path, (Candidate("avx512", builds=True), Candidate._avx_code, False))
    for candidate in (answered, unanswered):
        isa_probe._defer(candidate, tmp_path / isa_probe.ANSWER_FILE)
    assert answered.check_build(Candidate._avx_code) is False and answered.built == []
    assert unanswered.check_build(Candidate._avx_code) is True and unanswered.built == [Candidate._avx_code]
    assert answered.check_build("other code") is True and answered.built == ["other code"]
    answered.flags += " -mavx512bf16"  # the same code with other flags is another build
    assert answered.check_build(Candidate._avx_code) is True and answered.built == ["other code", Candidate._avx_code]


def test_the_prober_records_each_build_with_what_it_returned():
    candidate, builds = Candidate("avx512", builds=True), {}
    isa_probe._record(candidate, builds)
    assert candidate.check_build("a") is True
    candidate.flags, candidate.builds = "-mavx -mavx512bf16", False
    assert candidate.check_build("b") is False
    assert builds == {isa_probe._build_key(Candidate("avx512", True), "a"): True,
                      isa_probe._build_key(candidate, "b"): False}


def test_a_prober_that_ended_without_answering_leaves_every_candidate_to_probe_itself(tmp_path):
    candidate = Candidate("avx2", builds=True)
    isa_probe._defer(candidate, tmp_path / isa_probe.ANSWER_FILE)
    isa_probe.give_up(tmp_path)
    assert isa_probe.answered(tmp_path) and isa_probe.read_builds(tmp_path / isa_probe.ANSWER_FILE) == {}
    assert candidate.check_build(Candidate._avx_code) is True and candidate.built == [Candidate._avx_code]


def test_giving_up_keeps_an_answer_that_came(tmp_path):
    candidate = Candidate("avx2", builds=True)
    _answer(tmp_path, (candidate, Candidate._avx_code, True))
    isa_probe.give_up(tmp_path)
    assert isa_probe.read_builds(tmp_path / isa_probe.ANSWER_FILE) == {isa_probe._build_key(candidate, Candidate._avx_code): True}


def test_the_zygote_answers_for_a_prober_that_died_silent_and_only_for_it(tmp_path):
    from harness.run.loader_zygote import _Prober

    prober = _Prober(4242, tmp_path)
    assert not prober.ended(4243) and not isa_probe.answered(tmp_path)
    assert prober.ended(4242) and isa_probe.read_builds(tmp_path / isa_probe.ANSWER_FILE) == {}
    assert prober.pid is None
