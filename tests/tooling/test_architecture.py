"""The import rules of docs/ARCHITECTURE.md: which room of the repository may import which.

Every ``import`` and ``from ... import`` of every module is read with ``ast`` (those inside functions and
under ``TYPE_CHECKING`` too) and classified by the room of the module it names.  The rules are the ones
the code keeps today: production (``hicache``) imports only the standard library and itself; the models
import only the standard library and each other; the fake filesystem knows production only through the
port it implements; the reporting machinery reads results, not code; nothing but the tests imports the
tests.  ``import_violations`` is shown to fail on planted wrong imports, in synthetic modules and in a
copy of the real tree.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("hicache", "hicache_sglang", "spec", "tests", "benchmarks", "tools")

# room -> the module prefixes it holds; the first room with a matching prefix wins, so the specific
# rooms come before the catch-all ``checkers`` (every other module of spec/).
ROOMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("port", ("hicache.fs",)),
    ("hicache", ("hicache",)),
    ("engine backend", ("hicache_sglang",)),
    ("models", ("spec.models",)),
    ("world", ("spec.world",)),
    ("variants", ("spec.variants",)),
    ("reporting", ("spec.conformance",)),
    ("checkers", ("spec",)),
    ("tests", ("tests",)),
    ("benchmarks", ("benchmarks",)),
    ("tools", ("tools",)),
)
ANY = frozenset({"*"})
# room -> (the rooms it may import besides its own, the third-party top-level packages it may import)
RULES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "port": (frozenset(), frozenset()),
    "hicache": (frozenset({"port"}), frozenset()),
    # the reference store inside the engine (F10): torch and sglang come from the engine's own install
    "engine backend": (frozenset({"hicache", "port"}), frozenset({"torch", "sglang"})),
    "models": (frozenset(), frozenset()),
    "world": (frozenset({"port"}), frozenset()),
    "variants": (frozenset({"hicache", "port", "models", "world"}), frozenset()),
    "reporting": (frozenset(), frozenset({"pytest"})),
    "checkers": (
        frozenset({"hicache", "port", "models", "world", "variants", "reporting"}),
        # torch: imported only for the engine form of a file store (spec/oracle/_engine.py, O12)
        frozenset({"hypothesis", "pytest", "torch"}),
    ),
    "tests": (ANY, ANY),
    # torch: the engine's storage modules need it (benchmarks/engine_wheel.py loads them from the wheel)
    "benchmarks": (
        frozenset({"hicache", "port", "models", "engine backend"}),
        frozenset({"torch", "sglang"}),
    ),
    # tools/ may import anything: make engine-verdicts (tools/engine_verdicts.py) runs the oracle (spec) on
    # the engine's store loaded by benchmarks/engine_wheel.py and on the project's engine backend
    "tools": (ANY, ANY),
}


def room_of(module: str) -> str | None:
    """The room of a dotted module name of this project, or None for a name outside it."""
    for room, prefixes in ROOMS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return room
    return None


def module_of(path: str) -> str:
    """``spec/oracle/_run.py`` -> ``spec.oracle._run``; ``spec/oracle/__init__.py`` -> ``spec.oracle``."""
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # the tests below parse the same tree again, with one module changed
def read_module(path: str, source: str) -> tuple[tuple[tuple[int, str], ...], tuple[tuple[str, int], ...]]:
    """One walk of the module at ``path``: (line, dotted name) of every import in it (``from a import b``
    names ``a.b``: a module or a name in ``a``, either way in ``a``'s room or in a room inside it), and
    (name, line) of every class it defines, nested ones too (``test_spec_structure.py`` reads those)."""
    package = module_of(path) if path.endswith("__init__.py") else module_of(path).rpartition(".")[0]
    names: list[tuple[int, str]] = []
    classes: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            names.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names.extend(
                (node.lineno, base if alias.name == "*" else f"{base}.{alias.name}") for alias in node.names
            )
        elif isinstance(node, ast.ClassDef):
            classes.append((node.name, node.lineno))
    return tuple(names), tuple(classes)


def imported(path: str, source: str) -> tuple[tuple[int, str], ...]:
    """(line, dotted name) of every import in the module at ``path`` (:func:`read_module`)."""
    return read_module(path, source)[0]


def import_violations(sources: Mapping[str, str]) -> list[str]:
    """Every import in ``sources`` (repository-relative path -> source) that breaks ``RULES``."""
    problems = []
    for path, source in sorted(sources.items()):
        room = room_of(module_of(path))
        if room is None:
            problems.append(f"{path}: in no room of ROOMS")
            continue
        rooms, third_party = RULES[room]
        for line, name in imported(path, source):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names:
                continue
            if top in PACKAGES:
                target = room_of(name)
                if target != room and rooms is not ANY and target not in rooms:
                    problems.append(f"{path}:{line}: {room} imports {name} ({target})")
            elif third_party is not ANY and top not in third_party:
                problems.append(f"{path}:{line}: {room} imports the third-party {top}")
    return problems


@functools.cache
def _tree() -> tuple[tuple[str, str], ...]:
    return tuple(
        (path.relative_to(ROOT).as_posix(), path.read_text())
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    )


def tree() -> dict[str, str]:
    """Repository-relative path -> source of every module of the project's packages (a fresh copy)."""
    return dict(_tree())


def test_the_repository_keeps_the_import_rules() -> None:
    sources = tree()
    assert len(sources) > 100 and "hicache/file_store.py" in sources and "spec/machines/_base.py" in sources
    assert import_violations(sources) == []


def test_every_room_is_on_the_architecture_page() -> None:
    page = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    missing = [room for room in RULES if not re.search(rf"\|\s*{room}\s*\|", page)]
    assert missing == [], f"rooms without a row in docs/ARCHITECTURE.md's import table: {missing}"


def test_the_checker_finds_wrong_imports_in_synthetic_modules() -> None:
    sources = {
        "hicache/ok.py": "import os\nfrom . import fs\nfrom .fs import Fs\nfrom .x import y\n",
        "hicache/cheat.py": "def f():\n    from spec.machines import _base\n    import hypothesis\n",
        "spec/models/metadata_cache.py": "from . import existence_cache\nfrom hicache import MetadataCache\n",
        "spec/world/filesystem.py": (
            "from hicache.fs import FileStat\nfrom hicache.file_store import HiCacheFile\n"
        ),
        "spec/conformance/report.py": "import spec.machines.metadata_cache\n",
        "spec/oracle/_run.py": "from ..machines import _base\nfrom tests.unit import _store\nimport numpy\n",
        "spec/variants/file_store.py": "from hicache.fs import FileStat\nfrom spec.oracle import check\n",
        "benchmarks/x.py": "from spec.models.existence_cache import Spec\nfrom tests import conftest\n",
        "hicache_sglang/x.py": "import torch, sglang.srt, hicache\nimport spec.world.clock\n",
        "tests/unit/anything.py": "import spec.conformance.verify, hicache, benchmarks, tools.docs, numpy\n",
        "elsewhere/x.py": "import os\n",
    }
    assert import_violations(sources) == [
        "benchmarks/x.py:2: benchmarks imports tests.conftest (tests)",
        "elsewhere/x.py: in no room of ROOMS",
        "hicache/cheat.py:2: hicache imports spec.machines._base (checkers)",
        "hicache/cheat.py:3: hicache imports the third-party hypothesis",
        "hicache_sglang/x.py:2: engine backend imports spec.world.clock (world)",
        "spec/conformance/report.py:1: reporting imports spec.machines.metadata_cache (checkers)",
        "spec/models/metadata_cache.py:2: models imports hicache.MetadataCache (hicache)",
        "spec/oracle/_run.py:2: checkers imports tests.unit._store (tests)",
        "spec/oracle/_run.py:3: checkers imports the third-party numpy",
        "spec/variants/file_store.py:2: variants imports spec.oracle.check (checkers)",
        "spec/world/filesystem.py:2: world imports hicache.file_store.HiCacheFile (hicache)",
    ]


@pytest.mark.parametrize(
    ("path", "planted"),
    [
        ("hicache/metadata_cache.py", "from spec.machines import metadata_cache as _planted\n"),
        ("spec/models/existence_cache.py", "import hicache.existence_cache as _planted\n"),
        ("spec/machines/_base.py", "from tests.variants import file_store as _planted\n"),
    ],
)
def test_a_wrong_import_planted_in_a_copy_of_the_tree_is_found(path: str, planted: str) -> None:
    sources = tree()
    lines = sources[path].splitlines(keepends=True)
    sources[path] = "".join([*lines, planted])
    found = import_violations(sources)
    assert len(found) == 1 and found[0].startswith(f"{path}:{len(lines) + 1}: "), found


def absolute_self_imports(sources: Mapping[str, str]) -> list[str]:
    """The imports inside spec/ that name the package absolutely (``from spec.x import y``, ``import spec``).

    The folder is ``spec`` in the repository and ``hicache_spec`` once installed (pyproject.toml maps
    it), so a module of it reaches its siblings by relative imports alone."""
    found = []
    for path, source in sorted(sources.items()):
        if not path.startswith("spec/"):
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [f"{path}:{node.lineno}: {name}" for name in names if name.split(".")[0] == "spec"]
    return found


def test_spec_reaches_its_own_modules_by_relative_imports_alone() -> None:
    assert absolute_self_imports(tree()) == []
    planted = {
        "spec/models/x.py": "from . import metadata_cache\nfrom spec.models import file_store\n",
        "spec/oracle/y.py": "def f():\n    import spec.world.clock as clock\n",
        "tests/z.py": "from spec.models import file_store\n",
    }
    assert absolute_self_imports(planted) == [
        "spec/models/x.py:2: spec.models",
        "spec/oracle/y.py:2: spec.world.clock",
    ]
