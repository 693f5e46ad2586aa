"""The pytest plugin: collects the matrix suites as cells, runs each through harness.run, records results."""
