"""The timing statistics: the median's confidence interval, the spread, and the rule that stops sampling."""

import random
import statistics

import pytest

from harness.perf.stats import StopRule, median_ci, relative_ci_half_width, stop_reason, summarize
from harness.perf.timing import batch_size, sample_until_stable


def test_the_median_interval_brackets_the_median_and_narrows_with_more_samples():
    rng = random.Random(0)
    few = [rng.lognormvariate(0, 0.2) for _ in range(20)]
    many = few + [rng.lognormvariate(0, 0.2) for _ in range(980)]
    for samples in (few, many):
        low, high = median_ci(samples)
        assert low <= statistics.median(samples) <= high
    assert relative_ci_half_width(many) < relative_ci_half_width(few)


def test_the_interval_covers_the_true_median_about_95_percent_of_the_time():
    """Exponential(1) has median ln 2; 400 samples of 50 should miss it about 20 times, not 0 and not 100."""
    rng = random.Random(1)
    true_median = 0.6931471805599453
    misses = 0
    for _ in range(400):
        low, high = median_ci([rng.expovariate(1.0) for _ in range(50)])
        misses += not (low <= true_median <= high)
    assert 5 <= misses <= 40


def test_small_samples_get_their_whole_range_as_interval():
    assert median_ci([3.0, 1.0, 2.0]) == (1.0, 3.0)


def test_tight_samples_stop_on_the_ci_rule_once_there_are_enough():
    rule = StopRule(rel_ci=0.05, min_samples=10, max_samples=100, max_seconds=60)
    tight = [1.0 + 0.001 * (i % 3) for i in range(10)]
    assert stop_reason(tight[:9], 0.0, rule) is None  # fewer than min_samples: go on, however tight
    assert stop_reason(tight, 0.0, rule) == "ci"


def test_noisy_samples_stop_at_a_cap_and_say_which():
    rule = StopRule(rel_ci=0.05, min_samples=10, max_samples=30, max_seconds=60)
    noisy = [1.0, 3.0] * 15
    assert stop_reason(noisy[:20], 0.0, rule) is None
    assert stop_reason(noisy, 0.0, rule) == "max_samples"
    assert stop_reason(noisy[:12], 61.0, rule) == "max_seconds"


def test_a_summary_reports_median_interval_quartiles_and_n():
    samples = [float(v) for v in range(1, 101)]
    summary = summarize(samples, "ci")
    assert summary["median_s"] == 50.5
    assert summary["ci_low_s"] < 50.5 < summary["ci_high_s"]
    assert summary["q3_s"] - summary["q1_s"] == pytest.approx(49.5)
    assert summary["n"] == 100 and summary["converged"] is True
    assert summarize(samples, "max_samples")["converged"] is False


def test_sampling_goes_on_until_the_rule_says_stop():
    rng = random.Random(2)
    calls = []

    def take():
        calls.append(1)
        return [1.0 + rng.random() * 0.01]

    summary = sample_until_stable(take, StopRule(rel_ci=0.05, min_samples=12, max_samples=50, max_seconds=60))
    assert summary["stop"] == "ci" and summary["n"] == 12 == len(calls)


def test_a_batch_lasts_about_the_target_time():
    assert batch_size(1e-6, 1e-3) == 1000
    assert batch_size(0.5, 1e-3) == 1
    assert batch_size(0.0, 1e-3) == 10_000
