"""The statistics of a timing: median, its 95% confidence interval, the spread, and the rule that stops sampling.

The interval is distribution-free (order statistics of the sample, ranks from the binomial(n, 1/2)
distribution by its normal approximation), because timings are skewed with a long right tail and a
mean +/- sigma would describe a distribution they do not have. Pure Python: no torch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

Z_95 = 1.959964
MIN_SAMPLES_FOR_CI = 6  # below this the 95% order-statistic interval is the whole sample and means nothing


@dataclass(frozen=True)
class StopRule:
    """Sample until the median's 95% CI lies within `rel_ci` of the median, or a cap is reached."""

    rel_ci: float = 0.05
    min_samples: int = 10
    max_samples: int = 200
    max_seconds: float = 5.0


def median_ci(samples: Sequence[float]) -> tuple[float, float]:
    """The 95% confidence interval of the median: (low, high) order statistics; the sample's range when n is small."""
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        raise ValueError("no samples")
    if n < MIN_SAMPLES_FOR_CI:
        return ordered[0], ordered[-1]
    half_width = Z_95 * math.sqrt(n) / 2
    low_rank = max(1, math.floor(n / 2 - half_width))  # 1-based ranks
    high_rank = min(n, math.ceil(1 + n / 2 + half_width))
    return ordered[low_rank - 1], ordered[high_rank - 1]


def relative_ci_half_width(samples: Sequence[float]) -> float:
    """The larger distance from the median to an end of its CI, as a fraction of the median."""
    middle = statistics.median(samples)
    low, high = median_ci(samples)
    if middle <= 0:
        return math.inf
    return max(middle - low, high - middle) / middle


def is_stable(samples: Sequence[float], rule: StopRule) -> bool:
    return len(samples) >= max(rule.min_samples, MIN_SAMPLES_FOR_CI) and relative_ci_half_width(samples) <= rule.rel_ci


def stop_reason(samples: Sequence[float], elapsed_s: float, rule: StopRule) -> str | None:
    """Why sampling stops now ("ci", "max_samples", "max_seconds"), or None to go on."""
    if is_stable(samples, rule):
        return "ci"
    if len(samples) >= rule.max_samples:
        return "max_samples"
    if elapsed_s >= rule.max_seconds and len(samples) >= 1:
        return "max_seconds"
    return None


def summarize(samples: Sequence[float], stop: str) -> dict[str, float | int | str | bool]:
    """Median, CI, quartiles, min and n of a timing (seconds); `converged` says whether the CI rule stopped it."""
    low, high = median_ci(samples)
    if len(samples) >= 2:
        q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    else:
        q1 = q3 = samples[0]
    return {
        "median_s": statistics.median(samples),
        "ci_low_s": low,
        "ci_high_s": high,
        "q1_s": q1,
        "q3_s": q3,
        "min_s": min(samples),
        "n": len(samples),
        "stop": stop,
        "converged": stop == "ci",
    }
