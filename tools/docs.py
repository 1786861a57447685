"""`make docs`: the HTML API reference of the production package, built with pdoc from its docstrings.

``python -m tools.docs [OUTPUT]`` writes one page per module of ``MODULES`` into OUTPUT (default
``build/docs``, gitignored) and prints the path of its index.  The docstrings are reStructuredText
(``double backticks``), which pdoc converts to Markdown before rendering.  pdoc (the ``dev`` extra) is
imported only here, never by ``hicache``.  ``tests/tooling/test_docs.py`` builds the same pages.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final, Literal

__all__ = ["DOCFORMAT", "MODULES", "build"]

# The package and the filesystem port a caller implements (``hicache.fs.FileSystem``); the other
# submodules' public names are re-exported by ``hicache.__all__`` and documented on its page.
MODULES = ("hicache", "hicache.fs")
DOCFORMAT: Final[Literal["restructuredtext"]] = "restructuredtext"


def build(output: Path, modules: tuple[str, ...] = MODULES) -> Path:
    """Render ``modules`` into the folder ``output`` (created if missing); return its ``index.html``.

    A module's page is ``<dotted name with / for .>.html``; a public name's anchor is its qualified
    name inside the module (``MetadataCache``, ``MetadataCache.add``).
    """
    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat=DOCFORMAT)
    pdoc.pdoc(*modules, output_directory=output)
    return output / "index.html"


def main(argv: list[str]) -> int:
    output = Path(argv[0]) if argv else Path("build/docs")
    print(build(output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
