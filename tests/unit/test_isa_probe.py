"""A process forked before the ISA prober answered waits for its answer, and probes itself only where none came
(harness.run.isa_probe)."""

import json
import threading
import time

from harness.run import isa_probe


class Candidate:
    """Stands in for one of torch's VecISA candidates: `check_build` is what `VecISA.__bool__` asks."""

    _avx_code = "the probe's code"

    def __init__(self, name: str, builds: bool) -> None:
        self.name, self.builds, self.built = name, builds, []

    def __str__(self) -> str:
        return self.name

    def check_build(self, code: str) -> bool:
        self.built.append(code)
        return self.builds


def test_a_deferred_candidate_waits_for_the_probers_answer_and_builds_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(isa_probe, "POLL_S", 0.01)
    candidate = Candidate("avx512", builds=False)
    isa_probe._defer(candidate, tmp_path / isa_probe.ANSWER_FILE)
    answers: list[bool] = []
    asking = threading.Thread(target=lambda: answers.append(candidate.check_build(Candidate._avx_code)))
    asking.start()
    time.sleep(0.2)
    assert answers == []  # still waiting
    (tmp_path / isa_probe.ANSWER_FILE).write_text(json.dumps({"valid": {"avx512": True}, "answered_at": 1.0}))
    asking.join(10)
    assert answers == [True] and candidate.built == []


def test_where_the_prober_answered_nothing_the_candidate_probes_itself(tmp_path):
    answered = Candidate("avx512", builds=True)
    unanswered = Candidate("avx2", builds=True)
    for candidate in (answered, unanswered):
        isa_probe._defer(candidate, tmp_path / isa_probe.ANSWER_FILE)
    (tmp_path / isa_probe.ANSWER_FILE).write_text(json.dumps({"valid": {"avx512": False}}))
    assert answered.check_build(Candidate._avx_code) is False and answered.built == []
    assert unanswered.check_build(Candidate._avx_code) is True and unanswered.built == [Candidate._avx_code]
    assert answered.check_build("other code") is True and answered.built == ["other code"]


def test_a_prober_that_ended_without_answering_leaves_every_candidate_to_probe_itself(tmp_path):
    candidate = Candidate("avx2", builds=True)
    isa_probe._defer(candidate, tmp_path / isa_probe.ANSWER_FILE)
    isa_probe.give_up(tmp_path)
    assert isa_probe.answered(tmp_path) and isa_probe.read_answer(tmp_path / isa_probe.ANSWER_FILE) == {}
    assert candidate.check_build(Candidate._avx_code) is True and candidate.built == [Candidate._avx_code]


def test_giving_up_keeps_an_answer_that_came(tmp_path):
    (tmp_path / isa_probe.ANSWER_FILE).write_text(json.dumps({"valid": {"avx2": True}, "answered_at": 1.0}))
    isa_probe.give_up(tmp_path)
    assert isa_probe.read_answer(tmp_path / isa_probe.ANSWER_FILE) == {"avx2": True}


def test_the_zygote_answers_for_a_prober_that_died_silent_and_only_for_it(tmp_path):
    from harness.run.loader_zygote import _Prober

    prober = _Prober(4242, tmp_path)
    assert not prober.ended(4243) and not isa_probe.answered(tmp_path)
    assert prober.ended(4242) and isa_probe.read_answer(tmp_path / isa_probe.ANSWER_FILE) == {}
    assert prober.pid is None
