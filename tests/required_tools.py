"""Which missing tool skips a test and which fails it.

Two kinds of tool: those `nox -s tests` installs itself (pip wheels: actionlint, shellcheck, nox), and system tools
a user installs (chromium). In CI (CI=true, as GitHub and .ci/run set it) a missing tool of either kind fails. In the
tests session (TCM_REQUIRE_TOOLS=1, set by noxfile.py) a missing installed tool fails, since the session installed
it; a missing system tool skips there, so that the README's `nox -s tests` passes on a machine with only Python and
nox. Elsewhere (`pytest tests` in a bare checkout) every missing tool skips. A skip is one line: the tool and how to
install it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NoReturn

import pytest


def tool_required(system: bool, environ: Mapping[str, str] | None = None) -> bool:
    """True when a missing tool must fail the test: always in CI; an installed (pip) tool also in the tests session."""
    environ = os.environ if environ is None else environ
    if environ.get("CI") == "true":
        return True
    return not system and environ.get("TCM_REQUIRE_TOOLS") == "1"


def missing_tool(name: str, how_to_install: str, *, system: bool) -> NoReturn:
    """Fail or skip (never returns) with one line naming the tool and how to install it."""
    message = f"{name} is not installed ({how_to_install})"
    if tool_required(system):
        pytest.fail(message)
    pytest.skip(message)


RULE_VARIABLES = ("CI", "TCM_REQUIRE_TOOLS")


def every_tool_missing(monkeypatch: pytest.MonkeyPatch, environ: Mapping[str, str]) -> None:
    """For the rule's own tests: the rule's variables exactly as `environ` says, and an empty PATH, so that every
    tool is missing."""
    for variable in RULE_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in environ.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("PATH", "")
