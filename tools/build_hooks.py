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
folder, and adds ``hicache_spec`` as a second name for the same folder.  Loaded under that name,
``spec/__init__.py`` puts a finder in front of the import system that applies the same rewrite to each
``hicache_spec.*`` module as it is imported (``spec/_rename.py``): the editable ``hicache_spec`` works in
a project with its own ``spec`` module too, and the console script
``hicache-oracle = hicache_spec.oracle_entry:main`` runs it.  The rewrite itself lives in
``spec/_rename.py`` (standard library only), for both uses.

Why a rewrite at build time rather than relative imports inside ``spec/`` plus ``package_dir``:
relative imports do not reach the module paths kept in strings (``importlib`` lookups, the
reproduction files' import line, usage text), which would need their own switch on ``__package__``;
and every module of ``spec/`` (tests and tools import it as ``spec`` too) would change at once.  The
rewrite leaves the sources as they are and is checked by tests/integration/test_installed_wheel.py.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from typing import Any

from setuptools.command.build_py import build_py as _build_py

# setuptools loads this file by its path, with neither the checkout nor spec/ importable: the rewrite
# (spec/_rename.py, standard library only) is loaded the same way, from its file beside this one's folder.
_found = importlib.util.spec_from_file_location(
    "_hicache_rename", Path(__file__).resolve().parents[1] / "spec" / "_rename.py"
)
assert _found is not None and _found.loader is not None
_rename = sys.modules.setdefault("_hicache_rename", importlib.util.module_from_spec(_found))
if not hasattr(_rename, "rewrite_source"):
    _found.loader.exec_module(_rename)
INSTALLED: str = _rename.INSTALLED
SOURCE: str = _rename.SOURCE
RewriteError: type[ValueError] = _rename.RewriteError
own_modules = _rename.own_modules
rewrite_source = _rename.rewrite_source

__all__ = ["INSTALLED", "SOURCE", "BuildPy", "RewriteError", "own_modules", "rewrite_source"]


def _renamed(package: str) -> str:
    """``spec`` and ``spec.x`` as ``hicache_spec`` and ``hicache_spec.x``; other packages unchanged."""
    if package == SOURCE or package.startswith(SOURCE + "."):
        return INSTALLED + package[len(SOURCE) :]
    return package


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
