"""The code says why, never which ticket: no issue numbers in ``hicache/``, ``hicache_sglang/`` or ``spec/``
(a reader has the code and docs/, not the tracker; histories go to docs/ and commit messages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("hicache", "hicache_sglang", "spec")
# "issue 32", "issues 10", "Issue #7", or a bare "#31" (not a quoted colour such as "#999")
ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\d+|(?<![\w\"'#])#\d+\b", re.IGNORECASE)


def issue_numbers(source: str) -> list[tuple[int, str]]:
    """The lines of ``source`` that name an issue by number (``issue 32``, ``issues 10 and``, ``#31``)."""
    return [(n, line.strip()) for n, line in enumerate(source.splitlines(), 1) if ISSUE_NUMBER.search(line)]


def test_no_module_names_an_issue_by_number() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for n, line in issue_numbers(path.read_text(encoding="utf-8"))
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("x = 1  # 13, 16, 17 before the split (issue 32)", True),
        ('"""The oracle (issues 10 and 14)."""', True),
        ("# see #31 for the engine form", True),
        ("# Issue #7: the store", True),
        ("# an issue of the engine's, with 32 pages", False),
        ("color = '#ff0000'", False),
        ('out.append(_tick(x, top, "#000"))', False),
        ("x = y  # noqa: E501", False),
    ],
)
def test_the_check_tells_an_issue_number_from_other_numbers(line: str, named: bool) -> None:
    assert bool(issue_numbers(line)) is named
