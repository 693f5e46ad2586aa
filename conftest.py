"""Loads the matrix plugin when the package is not installed (installed, its entry point has the same name)."""

pytest_plugins = ["harness.plugin.pytest_plugin"]
