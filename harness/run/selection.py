"""Which cells a run asks: validated names, in a stable order with each control first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.run.subsets import default_pipelines, default_styles
from harness.vocab import CALL_SITE_PIPELINES, CALL_SITE_STYLES, CONTROL_STYLE, PIPELINES, STYLES, split_style


class SelectionError(ValueError):
    """An unknown kernel, style or pipeline name; the message is one line listing the valid ones."""


def validate(kind: str, asked: Iterable[str], known: Iterable[str]) -> list[str]:
    known_list = list(known)
    chosen: list[str] = []
    for name in asked:
        for part in name.split(","):
            part = part.strip()
            if not part:
                continue
            if part not in known_list:
                raise SelectionError(f"unknown {kind} {part!r}; valid {kind}s: {', '.join(known_list)}")
            if part not in chosen:
                chosen.append(part)
    return [name for name in known_list if name in chosen] or known_list


def chosen_kernels(asked: Iterable[str], specs: Mapping[str, Any], kernels_from: Iterable[str],
                   with_catalogue: bool = False) -> list[str]:
    """The kernels named (validated against every loaded spec, the catalogue's included); else, when
    `--kernels-from` named sources, only the kernels those sources define (a library's author asks about their
    own kernels: measured on the H100, nine Liger kernels were 1,413 cells, the catalogue added 5,495 more);
    else, or with `--with-catalogue`, every kernel loaded."""
    asked = list(asked)
    if asked:
        return validate("kernel", asked, specs)
    sources = set(kernels_from)
    if not sources or with_catalogue:
        return list(specs)
    return [name for name, spec in specs.items() if getattr(spec, "source", None) in sources]


def chosen_pipelines(asked: Iterable[str], every: bool, tier: str) -> list[str]:
    """The pipelines named (validated), else every pipeline with --all, else the tier's default selection."""
    asked = list(asked)
    if asked:
        return validate("pipeline", asked, PIPELINES)
    return list(PIPELINES) if every else list(default_pipelines(tier))


def chosen_styles(asked: Iterable[str], every: bool, tier: str) -> list[str]:
    """The styles named (validated; `style@site` names one call site), else the tier's default styles."""
    asked = list(asked)
    if asked:
        return validate("style", asked, STYLES + CALL_SITE_STYLES)
    return list(STYLES + CALL_SITE_STYLES) if every else list(default_styles(tier))


# pipelines that can load one another's artifact -> the name of their shared group
ARTIFACT_FAMILY = {"aoti": "aoti*", "aoti_strict": "aoti*", "aoti_fresh_process": "aoti*",
                   "export_roundtrip": "export_roundtrip*", "export_roundtrip_bare": "export_roundtrip*"}
# groups whose every cell makes a CUDA context in a fresh process: the driver makes contexts one at a time, so the
# scheduler runs only a few such groups at once (harness.plugin.xdist_scheduler, docs/maintainers.md "Ordering")
CONTEXT_BOUND_FAMILIES = ("export_roundtrip*",)


def context_bound(group: str) -> bool:
    """Whether each cell of the group (Cell.group) makes a CUDA context of its own in a fresh process."""
    return group.rsplit("/", 1)[-1] in CONTEXT_BOUND_FAMILIES


@dataclass(frozen=True)
class Cell:
    kernel: str
    style: str
    pipeline: str

    @property
    def id(self) -> str:
        return f"{self.kernel}/{self.style}/{self.pipeline}"

    @property
    def group(self) -> str:
        """Cells of one kernel and pipeline share a group, so the control runs before the styles it judges; the
        pipelines that build the same artifact share one, so that one worker builds it once
        (harness.domain.pipelines.artifacts)."""
        return f"{self.kernel}/{ARTIFACT_FAMILY.get(self.pipeline, self.pipeline)}"


def select_cells(kernels: list[str], styles: list[str], pipelines: list[str]) -> list[Cell]:
    """Kernel, then pipeline, then style, with the native control first in each group; call sites after the styles."""
    known = STYLES + CALL_SITE_STYLES
    ordered_styles = sorted(styles, key=lambda s: (s != CONTROL_STYLE, known.index(s)))
    ordered_pipelines = sorted(pipelines, key=PIPELINES.index)
    return [Cell(k, s, p) for k in kernels for p in ordered_pipelines for s in ordered_styles if asked_here(s, p)]


def asked_here(style: str, pipeline: str) -> bool:
    """A call-site style is asked only in the pipelines where the call site can change the answer."""
    return not split_style(style)[1] or pipeline in CALL_SITE_PIPELINES
