"""The README quotes the last recorded mutation score: the one docs/mutation-score.json holds (issue 23:
the README said 1880/1923 while the file said 2574/2634)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_quotes_the_recorded_mutation_score() -> None:
    recorded = json.loads((ROOT / "docs" / "mutation-score.json").read_text())
    readme = " ".join((ROOT / "README.md").read_text().split())
    quoted = re.findall(r"Last recorded: ([\d,]+) / ([\d,]+) killed \(([\d.]+)%\)", readme)
    assert quoted, "the README quotes no 'Last recorded: K / T killed (S%)'"
    expected = (f"{recorded['killed']}", f"{recorded['total']}", f"{recorded['score']}")
    assert [tuple(q.replace(",", "") for q in found) for found in quoted] == [expected], quoted
