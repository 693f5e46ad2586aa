"""The docs state the present: the README, benchmarks.md and maintainers.md stay within their sizes (a diary of
measurements goes to git history, not back into them), and every link into benchmarks.md or maintainers.md from
anywhere in the repository names an anchor the page has: a heading's or an `<a id>` kept for an old link."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMITS = {"README.md": 150, "docs/benchmarks.md": 250, "docs/maintainers.md": 500}
LINK = re.compile(r"\b(benchmarks|maintainers)\.md#([A-Za-z0-9_-]+)")


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors: each heading's slug (lower case, punctuation dropped, spaces to hyphens), and explicit ids."""
    found = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
    for heading in re.findall(r"^#{1,6} (.+)$", markdown, re.M):
        found.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return found


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [REPO / name for name in listed.splitlines()
            if name.endswith((".md", ".py", ".yml", ".yaml", ".toml", ".txt")) or "/" not in name]


@pytest.mark.parametrize("name, limit", LIMITS.items())
def test_the_page_stays_within_its_size(name: str, limit: int) -> None:
    lines = len((REPO / name).read_text(encoding="utf-8").splitlines())
    assert lines <= limit, f"{name} has {lines} lines, over {limit}: state the present, leave the log to git history"


def test_anchors_are_githubs() -> None:
    page = '# The harness\'s own tests\n## The whole GPU default in one run (issue 36)\n<a id="old-name"></a>\n'
    assert anchors(page) == {"the-harnesss-own-tests", "the-whole-gpu-default-in-one-run-issue-36", "old-name"}


def test_every_link_into_benchmarks_and_maintainers_resolves() -> None:
    targets = {page: anchors((REPO / "docs" / f"{page}.md").read_text(encoding="utf-8"))
               for page in ("benchmarks", "maintainers")}
    broken, checked = [], 0
    for path in tracked_text_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for page, anchor in LINK.findall(text):
            checked += 1
            if anchor not in targets[page]:
                broken.append(f"{path.relative_to(REPO)}: {page}.md#{anchor}")
    assert checked >= 20, f"only {checked} links found: the scan missed the files that link these pages"
    assert not broken, broken
