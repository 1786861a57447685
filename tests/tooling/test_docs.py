"""`make docs`: the pdoc API reference of hicache (tools/docs.py) is built, and every public name has its
anchor and its docstring's summary line on the page (issue 14 item 6).

A name without a docstring, or one pdoc cannot render, fails here: the checker is shown to fail on a
small module written for the test, and pdoc's warnings (an annotation it cannot evaluate, say) are
errors under the suite's ``filterwarnings = error``.
"""

from __future__ import annotations

import html
import importlib
import re
import sys
from pathlib import Path

import pytest

from tools.docs import MODULES, build

pytest.importorskip("pdoc", reason="pdoc is in the dev extra (requirements-dev.lock); make docs needs it")

CODE_BLOCK = re.compile(r'<div class="pdoc-code codehilite">.*?</div>', re.S)
ANCHOR = re.compile(r'\sid="(?P<id>[A-Za-z_][\w.]*)"')
DOCSTRING = re.compile(r'<div class="docstring">(?P<body>.*?)</div>', re.S)
ROLE = re.compile(r":[a-z]+:`~?(?P<target>[^`]+)`")


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def page_of(output: Path, module: str) -> Path:
    return output / (module.replace(".", "/") + ".html")


def reference_problems(module: str, page: str) -> list[str]:
    """What is wrong with ``page`` (pdoc's HTML of ``module``) for each name of ``module.__all__``.

    The source view and the docstrings' code blocks are dropped first, so a docstring's text counts only
    where pdoc rendered it as the name's documentation.  A name's documentation is the first docstring
    between its anchor and the next one; its words must contain those of the docstring's first line
    (reST roles and backticks removed: ``:meth:`stats``` renders as ``stats()``).
    """
    namespace = importlib.import_module(module)
    text = CODE_BLOCK.sub("", page)
    anchors = [(m["id"], m.start()) for m in ANCHOR.finditer(text)]
    problems = []
    for name in namespace.__all__:
        doc = getattr(namespace, name).__doc__
        if not doc or not doc.strip():
            problems.append(f"{module}.{name}: no docstring")
            continue
        starts = [i for i, (anchor, _) in enumerate(anchors) if anchor == name]
        if not starts:
            problems.append(f"{module}.{name}: no anchor id={name!r} on its page")
            continue
        i = starts[0]
        region = text[anchors[i][1] : anchors[i + 1][1] if i + 1 < len(anchors) else len(text)]
        rendered = DOCSTRING.search(region)
        summary = words(ROLE.sub(r"\g<target>", doc.strip().splitlines()[0]))
        shown = words(html.unescape(re.sub(r"<[^>]+>", " ", rendered["body"]))) if rendered else []
        if not any(shown[j : j + len(summary)] == summary for j in range(len(shown))):
            problems.append(f"{module}.{name}: its summary line {' '.join(summary)!r} is not rendered")
    return problems


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("docs")
    index = build(output)
    assert index.is_file()
    return output


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_has_its_anchor_and_its_summary_line(reference: Path, module: str) -> None:
    page = page_of(reference, module)
    assert page.is_file(), f"no page for {module} in {sorted(p.name for p in reference.rglob('*.html'))}"
    assert importlib.import_module(module).__all__, f"{module} has no __all__ to document"
    assert reference_problems(module, page.read_text()) == []


def test_the_reference_shows_a_docstring_example_and_a_link_between_pages(reference: Path) -> None:
    fs_page = page_of(reference, "hicache.fs").read_text()
    assert '<a href="../hicache.html#HiCacheFile">hicache.HiCacheFile</a>' in fs_page
    assert "&gt;&gt;&gt; cache = MetadataCache(5.0, clock=lambda: now[0])" in re.sub(
        r"<[^>]+>", "", page_of(reference, "hicache").read_text()
    )


PROBE = '''"""A module for the checker to fail on."""

__all__ = ["Documented", "bare", "Renamed"]


class Documented:
    """Has a summary line with ``code`` in it."""

    def method(self) -> None:
        """A method's own line, which must not stand in for a missing class docstring."""


def bare() -> None:
    pass


def Renamed() -> None:
    """The page will be edited to lose this line."""
'''


def test_the_checker_fails_on_a_missing_docstring_anchor_and_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs_probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        build(tmp_path / "out", ("docs_probe",))
        page = page_of(tmp_path / "out", "docs_probe").read_text()
        assert reference_problems("docs_probe", page) == ["docs_probe.bare: no docstring"]
        edited = page.replace("The page will be edited to lose this line.", "Something else.")
        assert reference_problems("docs_probe", edited) == [
            "docs_probe.bare: no docstring",
            "docs_probe.Renamed: its summary line 'The page will be edited to lose this line'"
            " is not rendered",
        ]
        unanchored = page.replace('id="Documented"', 'id="Other"')
        assert "docs_probe.Documented: no anchor id='Documented' on its page" in reference_problems(
            "docs_probe", unanchored
        )
    finally:
        sys.modules.pop("docs_probe", None)
