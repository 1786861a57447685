"""``hicache/`` works when it is vendored: copied alone, with no ``spec``, no site-packages (issue 10).

The README promises "vendor it by copying the folder".  These tests copy ``hicache/`` into an empty
directory and run, in a fresh interpreter with ``-I -S`` (no environment variables, no user or site
packages), the README's examples marked ``<!-- vendored example: NAME -->``: each marker is followed
by a ``python`` code block and, after the word "prints", a ``text`` block with its exact output.
Editing an example or its output in the README without the other fails here.  The docstring examples
of every module of the copy run there too, and a static check walks the imports of ``hicache/``.
"""

from __future__ import annotations

import ast
import doctest
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "hicache"
EXAMPLES = ("metadata-cache", "existence-cache", "file-store")
TIMEOUT = 120.0  # seconds; each script takes well under one

# Put the vendored copy, and nothing else of this checkout, on the path (-I leaves out the script's
# directory), and check that what is imported is the copy and that neither spec nor site-packages is.
PREAMBLE = """\
import importlib.util, sys
sys.path.insert(0, {vendor!r})
assert importlib.util.find_spec("spec") is None, "spec is importable"
assert not any("-packages" in entry for entry in sys.path), sys.path
import hicache
assert hicache.__file__.startswith({vendor!r}), hicache.__file__
"""
EPILOGUE = """
assert not [name for name in sys.modules if name == "spec" or name.startswith("spec.")]
"""
DOCTESTS = """
import doctest, importlib, pkgutil
for name in ["hicache"] + [f"hicache.{m.name}" for m in pkgutil.iter_modules(hicache.__path__)]:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    print(name, result.attempted, result.failed)
"""


def readme_example(name: str) -> tuple[str, str]:
    """(code, expected output) of the README example marked ``<!-- vendored example: name -->``."""
    text = (ROOT / "README.md").read_text()
    mark = f"<!-- vendored example: {name} -->"
    assert text.count(mark) == 1, f"the README marks one {name!r} example"
    after = text[text.index(mark) + len(mark) :]
    match = re.match(r"\s*```python\n(.*?)```\s*prints\s*```text\n(.*?)```", after, re.S)
    assert match, f"the {name!r} example is a python block, then 'prints', then a text block"
    return match[1], match[2]


@pytest.fixture
def vendor(tmp_path: Path) -> Path:
    """An empty directory holding a copy of hicache/ and nothing else."""
    directory = tmp_path / "vendor"
    shutil.copytree(PACKAGE, directory / "hicache", ignore=shutil.ignore_patterns("__pycache__"))
    return directory


def run_isolated(vendor: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = vendor.parent / "script.py"  # beside the vendored directory, not in it
    script.write_text(PREAMBLE.format(vendor=str(vendor)) + body + EPILOGUE)
    return subprocess.run(
        [sys.executable, "-I", "-S", str(script)],
        cwd=vendor,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_readme_example_runs_on_a_copy_of_hicache_alone_and_prints_what_the_readme_says(
    name: str, vendor: Path
) -> None:
    code, expected = readme_example(name)
    run = run_isolated(vendor, code)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
    assert "Traceback" not in run.stderr


def test_the_file_store_example_uses_a_temporary_directory_not_the_default() -> None:
    code, _ = readme_example("file-store")
    assert "with tempfile.TemporaryDirectory() as directory:" in code
    assert "HiCacheFile(directory," in code


def test_every_docstring_example_of_hicache_holds_on_a_copy_alone(vendor: Path) -> None:
    run = run_isolated(vendor, DOCTESTS)
    assert run.returncode == 0, run.stderr
    results = [line.split() for line in run.stdout.splitlines()]
    assert [name for name, _attempted, failed in results if failed != "0"] == [], run.stdout
    assert sum(int(attempted) for _name, attempted, _failed in results) > 0
    modules = {f"hicache.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {"hicache"}
    assert {name for name, _attempted, _failed in results} == modules


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level name) of every absolute import in ``tree``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.partition(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.partition(".")[0]))
    return found


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, top-level name) of every import of the module at ``path``, the examples of its
    docstrings included (a doctest's ``>>> from spec... import ...`` counts, at its docstring's line)."""
    tree = ast.parse(path.read_text(), str(path))
    found = _imports(tree)
    parser = doctest.DocTestParser()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and ">>>" in node.value:
            for example in parser.get_examples(node.value):
                found += [(node.lineno, name) for _line, name in _imports(ast.parse(example.source))]
    return found


def test_hicache_imports_nothing_but_the_standard_library_and_itself() -> None:
    allowed = set(sys.stdlib_module_names) | {"hicache", "__future__"}
    foreign = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, name in imported_modules(path)
        if name not in allowed
    ]
    assert foreign == [], "hicache/ must run without spec or any package outside the standard library"
