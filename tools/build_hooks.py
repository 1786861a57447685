"""Packaging: the wheel ships ``spec/`` under its own name, ``hicache_spec`` (issue 11 item 8).

The repository keeps its top-level ``spec/`` folder, and every in-repository import stays
``from spec.x import ...``.  Installed as ``spec`` in site-packages, though, it would shadow (or be
shadowed by) the ``spec`` package of any project that installs the oracle, so the wheel carries it as
``hicache_spec``: this ``build_py`` (named in pyproject.toml's ``[tool.setuptools.cmdclass]``) builds
the packages ``spec``, ``spec.*`` as ``hicache_spec``, ``hicache_spec.*`` from the same folders, and
rewrites each module's references to its own package as it writes it:

* absolute imports of the package (``from spec.oracle import ...``, ``from spec import clauses``,
  ``import spec.x as y``);
* module paths inside string literals (``"spec.machines.metadata_cache"`` for ``importlib``, the
  ``f"spec.modelcheck.{name}"`` lookups, the line ``from spec.oracle import machine_for`` of the
  oracle's reproduction files, ``python -m spec.oracle`` in usage and help text): a ``spec.`` that
  starts a dotted name and is followed by one of the package's own modules.

Code and comments are otherwise left alone (a local variable ``spec`` with ``spec.step(...)`` stays).
A bare ``import spec`` or ``import spec.x`` without ``as`` is refused: the rewritten import would
bind another name than the code uses.

An editable install (``pip install -e .``, the Makefile's venv) keeps ``spec`` pointing at the
folder, and adds ``hicache_spec`` as a second name for the same folder, so that the console script
``hicache-oracle = hicache_spec.oracle_entry:main`` works there too (its module imports ``spec.*``).
In a checkout, use ``spec``: ``python -m hicache_spec.oracle`` there would load the oracle's package
under both names.

Why a rewrite at build time rather than relative imports inside ``spec/`` plus ``package_dir``:
relative imports do not reach the module paths kept in strings (``importlib`` lookups, the
reproduction files' import line, usage text), which would need their own switch on ``__package__``;
and every module of ``spec/`` (tests and tools import it as ``spec`` too) would change at once.  The
rewrite leaves the sources as they are and is checked by tests/integration/test_installed_wheel.py.
"""

from __future__ import annotations

import io
import re
import shutil
import tokenize
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from setuptools.command.build_py import build_py as _build_py

__all__ = ["INSTALLED", "SOURCE", "BuildPy", "RewriteError", "own_modules", "rewrite_source"]

SOURCE = "spec"  # the package's name in the repository
INSTALLED = "hicache_spec"  # and in the wheel


def _renamed(package: str) -> str:
    """``spec`` and ``spec.x`` as ``hicache_spec`` and ``hicache_spec.x``; other packages unchanged."""
    if package == SOURCE or package.startswith(SOURCE + "."):
        return INSTALLED + package[len(SOURCE) :]
    return package


def own_modules(directory: Path) -> frozenset[str]:
    """The names directly under the package folder: its modules and subpackages."""
    names = {p.stem for p in directory.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in directory.iterdir() if (p / "__init__.py").is_file()}
    return frozenset(names)


# String literals, and the literal parts of f-strings (3.12 on) and t-strings (3.14 on).
_STRINGS = {tokenize.STRING} | {n for n, name in tokenize.tok_name.items() if name.endswith("STRING_MIDDLE")}


def _is_string(token: tokenize.TokenInfo) -> bool:
    return token.type in _STRINGS


class RewriteError(ValueError):
    """An import the rewrite cannot keep meaning the same (``import spec.x`` without ``as``)."""


def rewrite_source(source: str, modules: Iterable[str], old: str = SOURCE, new: str = INSTALLED) -> str:
    """``source`` with its references to the package ``old`` made to ``new``.

    ``modules`` are the names directly under the package (``oracle``, ``machines``, ...): a string's
    ``old.<name>`` is rewritten only for those.

    >>> source = "from spec.oracle import check\\nm = 'spec.machines.x'\\nspec.step(1)\\n"
    >>> print(rewrite_source(source, {"oracle", "machines"}), end="")
    from hicache_spec.oracle import check
    m = 'hicache_spec.machines.x'
    spec.step(1)
    """
    names = "|".join(map(re.escape, sorted(modules)))
    in_strings = re.compile(rf"(?<![\w.]){re.escape(old)}\.(?=(?:{names})\b)")
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (row, start col, end col, replacement); rows from 1
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    statement: list[tokenize.TokenInfo] = []  # the logical line so far (significant tokens)
    for i, token in enumerate(tokens):
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            statement = []
            continue
        if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            continue
        previous = statement[-1] if statement else None
        statement.append(token)
        if _is_string(token):
            (row, col), (end_row, end_col) = token.start, token.end
            for r in range(row, end_row + 1):  # a multi-line string: edit it line by line
                text = lines[r - 1]
                a = col if r == row else 0
                b = end_col if r == end_row else len(text)
                edits += [(r, m.start(), m.end(), new + ".") for m in in_strings.finditer(text, a, b)]
            continue
        if token.type != tokenize.NAME or token.string != old:
            continue
        if statement[0].string not in ("import", "from"):
            continue  # code and expressions: ``spec`` there is a variable, not the package
        if previous is None or previous.string not in ("import", "from", ","):
            continue  # not the first name of a dotted module path (``x.spec``, or ``import a as spec``)
        if statement[0].string == "from" and previous.string != "from":
            continue  # ``from pkg import spec``: a name inside another package
        if statement[0].string == "import":
            j = i + 1  # past the dotted name: ``as`` must follow
            while tokens[j].string == "." and tokens[j + 1].type == tokenize.NAME:
                j += 2
            if tokens[j].string != "as":
                dotted = "".join(t.string for t in tokens[i:j])
                raise RewriteError(
                    f"line {token.start[0]}: 'import {dotted}' would bind {new!r}, not {old!r};"
                    f" write 'from {old}... import ...' or 'import {dotted} as name'"
                )
        edits.append((token.start[0], token.start[1], token.end[1], new))
    for row, start, end, replacement in sorted(edits, reverse=True):
        text = lines[row - 1]
        lines[row - 1] = text[:start] + replacement + text[end:]
    return "".join(lines)


class BuildPy(_build_py):  # type: ignore[misc]  # setuptools' classes are untyped where it has no stubs
    """``build_py`` that builds the ``spec`` packages as ``hicache_spec`` (see the module docstring)."""

    packages: list[str]
    package_dir: dict[str, str]
    package_data: dict[str, list[str]]

    def finalize_options(self) -> None:
        super().finalize_options()
        if getattr(self, "editable_mode", False):
            # Editable: ``spec`` stays the folder; ``hicache_spec`` names the same folder for the console
            # script.  The editable finder reads the distribution's packages after build_py has run.
            dist = self.distribution
            if INSTALLED not in (dist.packages or []):
                dist.packages = [*(dist.packages or []), INSTALLED]
                dist.package_dir = {**(dist.package_dir or {}), INSTALLED: SOURCE}
            return
        package_dir = self.get_package_dir(SOURCE)
        self.packages = [_renamed(p) for p in self.packages or []]
        self.package_dir = {**self.package_dir, INSTALLED: package_dir}
        self.package_data = {_renamed(k): v for k, v in (self.package_data or {}).items()}
        self._modules = own_modules(Path(package_dir))

    def run(self) -> None:
        stale = Path(self.build_lib, SOURCE)
        if not getattr(self, "editable_mode", False) and stale.is_dir():
            # A build/lib/spec left by a build before this hook would be copied into the wheel whole.
            shutil.rmtree(stale)
        super().run()

    def build_module(self, module: str, module_file: str, package: Any) -> tuple[str, int]:
        outfile, copied = super().build_module(module, module_file, package)
        dotted = package if isinstance(package, str) else ".".join(package)
        if dotted == INSTALLED or dotted.startswith(INSTALLED + "."):
            source = Path(module_file).read_text(encoding="utf-8")
            Path(outfile).write_text(rewrite_source(source, self._modules), encoding="utf-8")
        return outfile, copied
