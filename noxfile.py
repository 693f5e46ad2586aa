"""nox sessions: `matrix` runs the matrix, `tests` runs the harness's own tests.

The CPU sessions pin torch to the CPU build that pip finds on this project's machines
(an unpinned `torch` would pull a 5 GB CUDA build). Override with TCM_TORCH / TCM_TRITON.
"""

from __future__ import annotations

import os

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

TORCH = os.environ.get("TCM_TORCH", "torch==2.13.0")
TRITON = os.environ.get("TCM_TRITON", "triton==3.7.1")


def install(session: nox.Session) -> None:
    session.install(TORCH, TRITON)
    session.install("-e", ".")


@nox.session
def matrix(session: nox.Session) -> None:
    """The whole matrix (CPU interpreter tier when no GPU is visible) -> reports/results-<env>.jsonl and .md."""
    install(session)
    session.run("python", "-m", "harness", "run", "-n", "auto", "--overwrite", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The harness's own tests, fault injection and a CPU-tier matrix run included."""
    install(session)
    session.install("ruff", "mypy")
    session.run("ruff", "check", "harness", "kernels", "matrix", "tests", "noxfile.py", "conftest.py")
    session.run("mypy")
    session.run("python", "-m", "pytest", "tests", "-n", "2", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Regenerate the measured API-choice chart in reports/api-choice.md from the committed GPU results.

    Pass `-- --results OTHER.jsonl` to render another run; `-- --check` to only check freshness.
    """
    session.install("tabulate")
    session.install("--no-deps", "-e", ".")
    session.run("python", "-m", "harness", "docs", "reports/api-choice.md", *session.posargs)
