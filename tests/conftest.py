"""The harness's own tests run on the tier this machine has; the CPU tier needs the interpreter before any kernel import."""

from harness.run.environment import enter_tier, resolve_tier

TIER = resolve_tier("auto")
enter_tier(TIER)
