"""The harness version, recorded in every results header."""

__version__ = "0.2.0"
