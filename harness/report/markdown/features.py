"""Views over the Triton features kernels declare: "autotune under export non-strict" is the chart of the
cells whose kernel is tagged `autotune`. Tags come from the results header (recorded by the run), never
from importing the kernels.
"""

from __future__ import annotations

from dataclasses import replace

from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.results import ResultsFile


class FeatureError(Exception):
    """A feature view the results cannot give; the message is one line."""


def kernel_features(results: ResultsFile) -> dict[str, list[str]]:
    """kernel -> its feature tags, as the run recorded them (empty for runs made before tags were recorded)."""
    kernels = results.header.get("kernels") or {}
    return {name: list(info.get("features", [])) for name, info in kernels.items()}


def only_feature(results: ResultsFile, feature: str, name: str) -> ResultsFile:
    """The same results restricted to the kernels tagged `feature`."""
    features = kernel_features(results)
    if not features:
        raise FeatureError(f"{name}: this results file records no kernel features (made before they were recorded)")
    known = sorted({tag for tags in features.values() for tag in tags})
    if feature not in known:
        raise FeatureError(f"{name}: no kernel is tagged {feature!r}; tags in this file: {', '.join(known)}")
    kernels = {kernel for kernel, tags in features.items() if feature in tags}
    return replace(results, cells=[cell for cell in results.cells if cell.kernel in kernels])


def render_feature_table(results: ResultsFile) -> str:
    """Which kernel uses which feature, so a chart's counts can be read per feature."""
    features = kernel_features(results)
    tags = sorted({tag for kernel_tags in features.values() for tag in kernel_tags})
    rows = [[escape_cell(tag), escape_cell(", ".join(sorted(k for k, t in features.items() if tag in t)))] for tag in tags]
    return markdown_table(["Feature", "Kernels"], rows) if rows else ""
