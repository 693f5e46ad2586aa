"""`python -m harness.report.upkeep.refresh [--check]`: rebuild every committed document that is made from committed results.

Those documents are each Markdown file of the checkout with the api-choice markers (the chart,
rendered from the committed GPU results or --results) and reports/history.md (from every results
file under reports/). "Of the checkout" means what git would commit: tracked
files and new ones it does not ignore, so a local run's ignored reports/results-*.jsonl never
leaks into a committed table. reports/matrix.html and reports/heatmap.png are the HTML page and
PNG heatmap of the committed GPU results (the PNG is rewritten, not checked: its pixels depend on
the matplotlib version). reports/tutorial-comparison.md is the PyTorch tutorial's chart against them
(harness.report.upstream). reports/findings.md embeds reproducers, which the domain writes (it imports
torch, which this module may not): `python -m harness findings` rewrites it and a repo test checks it.
`nox -s docs` runs this; CI runs it with --check (exit 1: stale).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from harness.atomic import write_text_atomic
from harness.report.compare.history import HistoryError, render_history
from harness.report.markdown.committed import COMMITTED_GPU_RESULTS
from harness.report.page.heatmap_png import write_heatmap_png
from harness.report.page.html import render_html
from harness.report.upkeep.docs import DocsMarkerError, has_marker_line, stale_diff, update_docs
from harness.report.upstream.tutorial_chart import TutorialChartError, compare, load_chart
from harness.report.upstream.tutorial_markdown import render_comparison
from harness.results import ResultsFileError, read_results

REPO = Path(__file__).resolve().parents[3]
HISTORY = Path("reports") / "history.md"
MATRIX_PAGE = Path("reports") / "matrix.html"  # the HTML page of the published results (harness.report.page.html)
HEATMAP_PNG = Path("reports") / "heatmap.png"  # its PNG heatmap: rewritten, never --check'ed (pixels vary with matplotlib)
TUTORIAL_COMPARISON = Path("reports") / "tutorial-comparison.md"  # harness tutorial on the committed GPU results
RESULTS_FOLDERS = ("reports",)


def checkout_files(repo: Path, suffix: str) -> list[Path]:
    """Relative paths git would commit (tracked, or new and not ignored); every file when `repo` is no git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=repo, capture_output=True, text=True, timeout=60, check=True).stdout
        names = {Path(name) for name in listed.split("\0") if name}
    except (OSError, subprocess.SubprocessError):
        names = {path.relative_to(repo) for path in repo.rglob(f"*{suffix}")
                 if not any(part.startswith(".") for part in path.relative_to(repo).parts)}
    return sorted(name for name in names if name.name.endswith(suffix) and (repo / name).is_file())


def history_sources(repo: Path) -> list[Path]:
    """The results under reports/: the published GPU run and reports/history/ (one fixed selection per
    version). Test fixtures measure other kernel sets; a column of theirs would compare unlike with like, and so
    would reports/ecosystem/ (other libraries' kernels, measured with the same torch: merged into the same column)."""
    return [path for path in checkout_files(repo, ".jsonl")
            if path.parts[0] == "reports" and path.parts[1:2] != ("ecosystem",)
            and not path.name.startswith("perf")]  # perf results are another format


def marked_docs(repo: Path) -> list[Path]:
    """Markdown files holding an api-choice region; tests/ (goldens, fixtures) is not documentation.

    A region starts with the marker on a line of its own: a document that only quotes the marker
    (in a code span, say) is not rewritten.
    """
    return [path for path in checkout_files(repo, ".md")
            if path.parts[0] != "tests" and has_marker_line((repo / path).read_text(encoding="utf-8", errors="replace"))]


def history_text(repo: Path) -> str:
    sources = history_sources(repo)
    if not sources:
        raise HistoryError(f"{repo}: no results files under {' or '.join(RESULTS_FOLDERS)}")
    return render_history([(str(path), read_results(repo / path)) for path in sources])


def refresh_history(repo: Path, check: bool) -> tuple[bool, str]:
    """(stale, unified diff) for reports/history.md; rewritten atomically unless check."""
    path = repo / HISTORY
    new = history_text(repo)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if new == old:
        return False, ""
    diff = stale_diff(old, new, str(HISTORY))
    if not check:
        write_text_atomic(path, new)
    return True, diff


def refresh_page(repo: Path, results_path: Path, check: bool) -> tuple[bool, str]:
    """(stale, diff summary) for reports/matrix.html; rewritten with reports/heatmap.png unless check."""
    files = [(str(results_path), read_results(results_path))]
    path = repo / MATRIX_PAGE
    new = render_html(files)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if not check:
        write_heatmap_png(files, repo / HEATMAP_PNG)
    if new == old:
        return False, ""
    if not check:
        write_text_atomic(path, new)
    return True, f"{MATRIX_PAGE} differs from what {results_path} renders to ({len(old)} -> {len(new)} characters)\n"


def tutorial_comparison_text(repo: Path, results_path: Path) -> str:
    """The tutorial comparison as committed: the results named relative to the checkout."""
    try:
        name = str(results_path.resolve().relative_to(repo))
    except ValueError:
        name = str(results_path)
    results, chart = read_results(results_path), load_chart()
    return render_comparison(results, name, chart, compare(results, chart))


def refresh_tutorial(repo: Path, results_path: Path, check: bool) -> tuple[bool, str]:
    """(stale, unified diff) for reports/tutorial-comparison.md; rewritten atomically unless check."""
    path = repo / TUTORIAL_COMPARISON
    new = tutorial_comparison_text(repo, results_path)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if new == old:
        return False, ""
    if not check:
        write_text_atomic(path, new)
    return True, stale_diff(old, new, str(TUTORIAL_COMPARISON))


def refresh(repo: Path, results_path: Path, check: bool) -> int:
    """Each document's state on stdout, diffs of stale ones with check; 1 when check found one stale."""
    results = read_results(results_path)
    outcomes: list[tuple[Path, bool, str]] = []
    for doc in marked_docs(repo):
        outcomes.append((doc, *update_docs(repo / doc, results, check=check)))
    outcomes.append((HISTORY, *refresh_history(repo, check)))
    outcomes.append((MATRIX_PAGE, *refresh_page(repo, results_path, check)))
    outcomes.append((TUTORIAL_COMPARISON, *refresh_tutorial(repo, results_path, check)))
    for path, stale, diff in outcomes:
        if check and stale:
            sys.stdout.write(diff)
        print(f"{path}: {('stale' if check else 'rewritten') if stale else 'fresh'}")
    return 1 if check and any(stale for _, stale, _ in outcomes) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.report.upkeep.refresh", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; print diffs and exit 1 when stale")
    parser.add_argument("--results", type=Path, default=COMMITTED_GPU_RESULTS,
                        help="results the api-choice charts are rendered from (default: the committed GPU results)")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to refresh (default: this one)")
    args = parser.parse_args(argv)
    try:
        return refresh(args.repo.resolve(), args.results, args.check)
    except (OSError, UnicodeError, ResultsFileError, DocsMarkerError, HistoryError, TutorialChartError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
