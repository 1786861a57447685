"""docs/SEMANTICS.md states every clause the conformance report knows, and no other (issue 10).

The report, the tests' tags and the models cite clause IDs from ``spec/conformance/clauses.py``; the text of
each clause is in ``docs/SEMANTICS.md``.  The shared requirements (``SEMANTICS.md`` in the
read-only ``shared/`` folder beside the checkout, when there is one) must be covered too: each of
their clauses either stated in the project's file or listed there as not yet carried in.  The one
kind of ID the project adds is a declared variant of a shared clause (V3-bg: precision on V3, O3).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spec.conformance.clauses import CLAUSE_IDS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "SEMANTICS.md"
SHARED = ROOT.parent / "shared" / "SEMANTICS.md"
NOT_YET = "## Clauses not yet carried in"

# A clause in docs/SEMANTICS.md starts a line with its ID in bold: "**M1.** ...", "**M6-lru.** ...".
DOC_CLAUSE = re.compile(r"^\*\*([A-Z][0-9]+(?:-[a-z]+)?)\.\*\*(.*)$")
# A clause in the shared requirements starts a line with its ID: "M1. ...", "M6-lru (a declared ...".
SHARED_CLAUSE = re.compile(r"^([A-Z][0-9]+(?:-[a-z]+)?)[. ]")


def doc_clauses(text: str) -> dict[str, str]:
    """Clause ID -> its text (up to the next clause or heading), in the order they appear."""
    clauses: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        match = DOC_CLAUSE.match(line)
        if match:
            current = match[1]
            assert current not in clauses, f"{current} is stated twice in docs/SEMANTICS.md"
            clauses[current] = match[2].strip()
        elif line.startswith("#") or line.startswith("---"):
            current = None
        elif current is not None:
            clauses[current] = f"{clauses[current]} {line.strip()}".strip()
    return clauses


def carried_and_not_yet() -> tuple[dict[str, str], dict[str, str]]:
    """(clauses stated in the sections above "not yet carried in", clauses listed in that section)."""
    text = DOC.read_text()
    assert text.count(NOT_YET) == 1, f"docs/SEMANTICS.md has one section {NOT_YET!r}"
    carried, not_yet = text.split(NOT_YET)
    return doc_clauses(carried), doc_clauses(not_yet)


def test_every_clause_the_report_knows_is_stated_and_no_other_is() -> None:
    carried, not_yet = carried_and_not_yet()
    known = CLAUSE_IDS
    assert sorted(known - set(carried)) == [], (
        "clauses of spec/conformance/clauses.py with no text in docs/SEMANTICS.md"
    )
    assert sorted(set(carried) - known) == [], (
        "clauses stated in docs/SEMANTICS.md that spec/conformance/clauses.py does not know"
        " (list them under 'Clauses not yet carried in' until their issue lands)"
    )
    short = sorted(cid for cid, body in carried.items() if len(body.split()) < 8)
    assert short == [], "clauses whose statement is (nearly) empty"
    assert sorted(known & set(not_yet)) == [], (
        "clauses listed as not yet carried in that spec/conformance/clauses.py knows:"
        " move them into their section"
    )
    assert all(not_yet.values()), "a clause not yet carried in needs its one line"


def test_each_clause_is_stated_under_the_heading_of_its_component() -> None:
    section = ""
    misplaced = []
    for line in DOC.read_text().split(NOT_YET)[0].splitlines():
        heading = re.match(r"^## ([A-Z])\. ", line)
        if heading:
            section = heading[1]
        match = DOC_CLAUSE.match(line)
        if match and match[1][0] != section:
            misplaced.append(match[1])
    assert misplaced == []


def test_every_clause_of_the_shared_requirements_is_stated_or_listed_as_not_yet_carried_in() -> None:
    if not SHARED.is_file():
        pytest.skip(f"the shared requirements are not beside this checkout ({SHARED} does not exist)")
    required = [m[1] for line in SHARED.read_text().splitlines() if (m := SHARED_CLAUSE.match(line))]
    assert len(required) == len(set(required)), "a clause ID appears twice in the shared requirements"
    carried, not_yet = carried_and_not_yet()
    assert sorted(set(required) - set(carried) - set(not_yet)) == [], (
        "clauses of the shared requirements that docs/SEMANTICS.md neither states nor lists"
    )
    known = set(required) | declared_variants(carried, set(required))
    assert sorted((set(carried) | set(not_yet)) - known) == [], (
        "clause IDs of docs/SEMANTICS.md that the shared requirements do not have"
    )
    assert sorted(CLAUSE_IDS - known) == [], "spec/conformance/clauses.py knows clauses the requirements lack"


def declared_variants(carried: dict[str, str], required: set[str]) -> set[str]:
    """The project's own declared variants of shared clauses (V3-bg, issue 24): precision added to a clause
    of the requirements (O3), an ID ``<clause>-<suffix>`` whose text opens with "A declared variant of
    <clause>"; the variants the requirements name themselves (M6-lru) are theirs."""
    return {
        cid
        for cid, text in carried.items()
        if "-" in cid
        and cid not in required
        and cid.split("-")[0] in required
        and text.startswith(f"A declared variant of {cid.split('-')[0]}")
    }


def test_a_declared_variant_of_a_shared_clause_must_say_so() -> None:
    """The rule above can fail: a suffixed ID whose text does not open as a declared variant, or whose
    base is not a clause of the requirements, is not one."""
    required = {"V3", "M6"}
    carried = {
        "V3-bg": "A declared variant of V3, for an evictor that evicts in the background",
        "V3-x": "Something else entirely",
        "Q9-bg": "A declared variant of Q9",
    }
    assert declared_variants(carried, required) == {"V3-bg"}
    assert "V3-bg" in declared_variants(carried_and_not_yet()[0], {"V3"})


def test_every_pointer_to_the_clause_text_names_docs_semantics_md() -> None:
    """Docstrings, the report, the oracle's reproductions, the README: ``docs/SEMANTICS.md``, never a
    bare ``SEMANTICS.md``, which names no file of this checkout (a relative link inside docs/ does)."""
    own = {DOC, Path(__file__).resolve()}
    stray = []
    tops = [top for top in ROOT.iterdir() if not top.name.startswith((".", "build"))]  # no .venv, .git
    for path in sorted(p for top in tops for p in ([top] if top.is_file() else top.rglob("*"))):
        parts = path.relative_to(ROOT).parts
        if path.suffix not in {".py", ".md", ".toml"} or path in own:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in re.finditer(r"SEMANTICS\.md", line):
                before = line[: match.start()]
                linked = parts[0] == "docs" and before.endswith("](")
                if not (before.endswith("docs/") or linked):
                    stray.append(f"{path.relative_to(ROOT)}:{number}")
    assert stray == []
