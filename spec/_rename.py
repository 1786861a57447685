"""The package's two names: ``spec`` in the repository, ``hicache_spec`` when installed (issue 11 item 8).

``rewrite_source`` rewrites a module's references to its own package (``from spec.oracle import ...``,
``"spec.machines.x"`` in strings) to the other name.  It serves twice, standard library only:

* the wheel's build (``tools/build_hooks.py``) writes every module of ``spec/`` as ``hicache_spec/``
  with it;
* an editable install (``pip install -e``) maps ``hicache_spec`` onto the folder ``spec/`` itself, where
  the modules still say ``spec.*``: in a project with its own ``spec`` module those imports would find
  the project's (``No module named 'spec.oracle'; 'spec' is not a package``).  So ``spec/__init__.py``,
  loaded as ``hicache_spec`` from a folder named ``spec``, calls :func:`install`: a finder first on
  ``sys.meta_path`` loads each ``hicache_spec.*`` module from the folder with the same rewrite applied
  as it is imported (no bytecode cache, so the ``spec.*`` modules' caches are untouched).  The
  installed package is then one whole under its own name, as the wheel's is, and edits to the
  checkout show at once.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from collections.abc import Iterable, Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader
from pathlib import Path
from types import CodeType, ModuleType

__all__ = ["INSTALLED", "SOURCE", "RewriteError", "install", "own_modules", "rewrite_source"]

SOURCE = "spec"  # the package's name in the repository
INSTALLED = "hicache_spec"  # and in the wheel


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


class _RenamingLoader(SourceFileLoader):
    """Loads a module of the folder ``spec/`` under the installed name, its references rewritten."""

    def __init__(self, fullname: str, path: str, modules: frozenset[str]) -> None:
        super().__init__(fullname, path)
        self._modules = modules

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        source = self.get_data(path).decode("utf-8")
        return compile(rewrite_source(source, self._modules), path, "exec", dont_inherit=True)


class _RenamingFinder(MetaPathFinder):
    """Finds ``hicache_spec.*`` in the folder ``spec/`` and loads it through :class:`_RenamingLoader`."""

    def __init__(self, package: str, folder: str) -> None:
        self.package = package
        self.folder = folder
        self.modules = own_modules(Path(folder))

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith(self.package + "."):
            return None
        found = PathFinder.find_spec(fullname, path)
        if found is None or found.origin is None or not isinstance(found.loader, SourceFileLoader):
            return found
        found.loader = _RenamingLoader(fullname, found.origin, self.modules)
        return found


def install(package: str, folder: str) -> None:
    """Load ``package``'s submodules from ``folder`` with their references to ``spec`` rewritten to
    ``package`` (an editable install: see the module docstring).  Idempotent."""
    if not any(isinstance(f, _RenamingFinder) and f.package == package for f in sys.meta_path):
        sys.meta_path.insert(0, _RenamingFinder(package, folder))
