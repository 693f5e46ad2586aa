"""One clear line when a library a spec module launches is missing or at another version than its specs were written
for, instead of a ModuleNotFoundError from deep in an import (the harness prints it naming the module: exit 2)."""

from __future__ import annotations

from importlib import metadata


class LibraryMissing(ImportError):
    """The library is not installed; the message says how to install the version the specs were written against."""


def require(distribution: str, version: str, extra: str) -> str:
    """The installed version of `distribution`; raises LibraryMissing when it is not installed. Another version is
    allowed (the matrix is how one finds out what changed) and recorded in each spec's description."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        raise LibraryMissing(f"needs {distribution} (written against {version}): pip install "
                             f"'triton-compat-matrix[{extra}]' or pip install {distribution}=={version}") from None
