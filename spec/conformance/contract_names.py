"""Static check that every name a PEP 316 contract uses can be resolved.

CrossHair evaluates a ``pre:`` / ``post:`` line in the function's module.  A
name that is not defined there (an import ruff removed because only a
docstring used it, a typo) makes the precondition raise, and CrossHair then
answers ``Unable to meet precondition``: the contract checks nothing.  The
same answer also comes, harmlessly, from a precondition CrossHair could not
satisfy within its time budget on a busy machine.  This module tells the two
apart without running anything: it lists the contract names that resolve to
neither a parameter, a name bound inside the expression (comprehension
targets, lambda arguments), a CrossHair name (``__return__``, ``__old__``),
a module-level binding nor a builtin.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["UnresolvedName", "unresolved_names"]

CONTRACT_RE = re.compile(r"^\s*(?:pre|post)(?:\[[^\]]*\])?:\s*(?P<expr>.+?)\s*$")
CROSSHAIR_NAMES = frozenset({"__return__", "__old__", "_"})


@dataclass(frozen=True)
class UnresolvedName:
    """A contract at ``line`` of a module uses ``name``, which nothing defines."""

    line: int
    name: str


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set(dir(builtins))
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
    return names


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    a = node.args
    return {arg.arg for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if arg is not None}


def _expression_names(expr: ast.expr) -> tuple[set[str], set[str]]:
    """(names loaded, names bound inside the expression)."""
    loaded: set[str] = set()
    bound: set[str] = set()
    for sub in ast.walk(expr):
        if isinstance(sub, ast.Name):
            (bound if isinstance(sub.ctx, ast.Store) else loaded).add(sub.id)
        elif isinstance(sub, ast.Lambda):
            bound |= _parameters(sub)
    return loaded, bound


def unresolved_names(path: Path) -> list[UnresolvedName]:
    """Every (line, name) of a contract in ``path`` that nothing defines; ``[]`` when all resolve.

    A contract line that is not a valid Python expression is reported with the
    name ``<syntax error>``.
    """
    source = path.read_text()
    tree = ast.parse(source)
    module_names = _module_names(tree)
    lines = source.splitlines()
    found: list[UnresolvedName] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if ast.get_docstring(node, clean=False) is None:
            continue
        doc = node.body[0]
        known = module_names | _parameters(node) | CROSSHAIR_NAMES
        for lineno in range(doc.lineno, (doc.end_lineno or doc.lineno) + 1):
            m = CONTRACT_RE.match(lines[lineno - 1])
            if not m:
                continue
            try:
                expr = ast.parse(m["expr"], mode="eval").body
            except SyntaxError:
                found.append(UnresolvedName(lineno, "<syntax error>"))
                continue
            loaded, bound = _expression_names(expr)
            found.extend(UnresolvedName(lineno, name) for name in sorted(loaded - bound - known))
    return found
