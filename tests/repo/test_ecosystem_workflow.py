"""The nightly ecosystem workflow runs one job per spec module of kernels/ecosystem/, installing the version that
module and pyproject.toml's extra name: the three cannot drift apart (the workflow is read as text)."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = (REPO / ".github" / "workflows" / "nightly-ecosystem.yml").read_text(encoding="utf-8")
EXTRAS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
EXTRA_OF = {"liger": "liger", "flag_gems": "flaggems", "fla": "fla"}


def jobs() -> dict[str, str]:
    """library -> its `packages:` line."""
    return dict(re.findall(r"- library: (\w+)\n(?:\s+#.*\n|\s+title: .*\n)*\s+packages: (.+)", WORKFLOW))


def test_one_job_per_spec_module():
    modules = {path.stem for path in (REPO / "kernels" / "ecosystem").glob("*.py") if not path.stem.startswith("_")}
    assert set(jobs()) == modules == set(EXTRA_OF)


def test_each_job_installs_the_version_its_module_and_extra_name():
    for library, packages in jobs().items():
        pinned = EXTRAS[EXTRA_OF[library]][0]
        assert packages.split()[0] == pinned, (library, packages, pinned)
        distribution, version = pinned.split("==")
        module = (REPO / "kernels" / "ecosystem" / f"{library}.py").read_text(encoding="utf-8")
        assert f'require("{distribution}", "{version}", "{EXTRA_OF[library]}")' in module


def test_every_job_is_optional():
    assert "continue-on-error: true" in WORKFLOW and "--kernels-from \"$MODULE\"" in WORKFLOW
