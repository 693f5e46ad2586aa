"""docs/triton-features.md maps every feature tag of the catalogue to PyTorch's tests, and its requires table is true."""

import re
from pathlib import Path

from harness.domain.registry import load_specs

DOC = Path(__file__).resolve().parents[2] / "docs" / "triton-features.md"


def test_every_feature_tag_of_the_catalogue_has_a_row():
    text = DOC.read_text()
    tags = {tag for spec in load_specs().values() for tag in spec.features}
    assert sorted(tag for tag in tags if f"`{tag}`" not in text) == []


def test_the_requires_table_says_what_the_specs_declare():
    rows = re.findall(r"^\| `([\w-]+)` \| [^|]+ \| `(\w+)` \|$", DOC.read_text(), re.M)
    specs = load_specs()
    assert rows and all(requirement in specs[kernel].requires for requirement, kernel in rows)
    declared = {(requirement, spec.name) for spec in specs.values() for requirement in spec.requires}
    assert declared == set(rows)
