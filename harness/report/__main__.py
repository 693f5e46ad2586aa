"""`python -m harness.report <subcommand> ...`: the report side on its own, without torch."""

from __future__ import annotations

import argparse

from harness.process_exit import exit_without_final_collection
from harness.report.cli import add_subcommands


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.report", description=__doc__)
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    exit_without_final_collection(main())
