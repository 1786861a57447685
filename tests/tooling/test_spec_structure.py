"""spec/ stays a tree of modules with one meaning per class name.

Two checks over the source, read with ``ast``:

* no import cycle among spec/'s modules, counting every import: those at the top, those inside functions
  (lazy), those under ``if TYPE_CHECKING:``; relative imports are resolved against the importing module's
  package.  ``from a import b`` is an edge to the module ``a.b`` when there is one, else to ``a``.  A
  module's parent packages run first when it is imported, but that is not an edge of the module: every
  module would otherwise be in a cycle with the ``__init__`` that names it.
* no two classes of spec/ share a name (nested classes counted), so that a name in a traceback, a report
  or a review means one thing.

Each check is shown to fail: on planted trees (a cycle made only of a lazy import, a ``TYPE_CHECKING``
import and a relative one; a name defined twice) and on a copy of spec/ with one import planted.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.tooling.test_architecture import imported, module_of, read_module

ROOT = Path(__file__).resolve().parents[2]


def sources_of(package: Path) -> dict[str, str]:
    """Path relative to ``package``'s parent (``spec/oracle/_run.py``) -> source, for every module of it."""
    return {
        path.relative_to(package.parent).as_posix(): path.read_text()
        for path in sorted(package.rglob("*.py"))
    }


def import_edges(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` it imports, every import counted (lazy, ``TYPE_CHECKING``,
    relative ones resolved against the importing module's package): ``from a import b`` is an edge to
    the module ``a.b`` where there is one, else to ``a``."""
    modules = {module_of(path) for path in sources}
    edges: dict[str, set[str]] = {}
    for path, source in sources.items():
        found = edges.setdefault(module_of(path), set())
        for _line, name in imported(path, source):
            parent = name.rpartition(".")[0]
            found |= {name} if name in modules else {parent} & modules
    return edges


def import_cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with a cycle (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in edges[node]:
                        cycles.append(sorted(component))
    return sorted(cycles)


def shared_class_names(sources: Mapping[str, str]) -> dict[str, list[str]]:
    """Class name -> where each class of that name is defined (``path:line``), for names defined twice."""
    where: dict[str, list[str]] = {}
    for path, source in sorted(sources.items()):
        for name, line in read_module(path, source)[1]:
            where.setdefault(name, []).append(f"{path}:{line}")
    return {name: places for name, places in where.items() if len(places) > 1}


SPEC = sources_of(ROOT / "spec")


def test_spec_has_no_import_cycle_counting_every_import() -> None:
    assert import_cycles(import_edges(SPEC)) == []


def test_no_two_classes_in_spec_share_a_name() -> None:
    assert shared_class_names(SPEC) == {}


def test_a_cycle_of_a_lazy_a_type_checking_and_a_relative_import_is_found() -> None:
    package = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from pkg.sub import b\n    return b\n",  # lazy
        "pkg/sub/__init__.py": "",
        "pkg/sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n",
        "pkg/sub/c.py": "from .. import a\nclass C: ...\n",  # relative, two levels up
        "pkg/d.py": "import pkg.a\n",  # imports into the cycle, not part of it
    }
    assert import_cycles(import_edges(package)) == [["pkg.a", "pkg.sub.b", "pkg.sub.c"]]


def test_a_module_importing_itself_is_a_cycle_and_a_package_importing_its_module_is_not() -> None:
    package = {"pkg/__init__.py": "from pkg import m\n", "pkg/m.py": "def f():\n    from . import m\n"}
    assert import_cycles(import_edges(package)) == [["pkg.m"]]


def test_a_class_name_defined_twice_is_found() -> None:
    package = {
        "pkg/__init__.py": "",
        "pkg/a.py": "class Found:\n    class Inner: ...\n",
        "pkg/b.py": "def f():\n    class Found: ...\n",
        "pkg/c.py": "class Inner: ...\nclass Alone: ...\n",
    }
    assert shared_class_names(package) == {
        "Found": ["pkg/a.py:1", "pkg/b.py:2"],
        "Inner": ["pkg/a.py:2", "pkg/c.py:1"],
    }


@pytest.mark.parametrize(
    ("module", "planted", "cycle"),
    [
        (  # the cycle this test was written against: B1's construct() reaching back for prepared()
            "spec/oracle/_prepared.py",
            "\n\ndef _late() -> None:\n    from spec.oracle._bad_settings import construct\n",
            {"spec.oracle._prepared", "spec.oracle._bad_settings"},
        ),
        (
            "spec/oracle/_result.py",
            "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._run import check\n",
            {"spec.oracle._result", "spec.oracle._run"},
        ),
    ],
)
def test_an_import_planted_in_a_copy_of_spec_makes_a_cycle_that_is_found(
    module: str, planted: str, cycle: set[str]
) -> None:
    copy = {**SPEC, module: SPEC[module] + planted}
    found = import_cycles(import_edges(copy))
    assert len(found) == 1
    assert cycle <= set(found[0])


def test_a_class_planted_in_a_copy_of_spec_under_a_name_in_use_is_found() -> None:
    module = "spec/modelcheck/explorer.py"
    copy = {**SPEC, module: SPEC[module] + "\n\nclass Prepared:\n    pass\n"}
    assert list(shared_class_names(copy)) == ["Prepared"]
