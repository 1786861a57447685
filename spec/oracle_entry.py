"""The ``hicache-oracle`` console script: the oracle's CLI, with a clear message when its tools are missing.

The oracle drives Hypothesis machines, so it needs the ``oracle`` extra
(``pip install 'hicache-reference[oracle]'``); the production package itself
needs nothing but the standard library.  Without Hypothesis this exits 2 with
that instruction instead of an ImportError traceback.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["main"]

MISSING = (
    "hicache-oracle: the oracle needs Hypothesis, which is not installed here;"
    " install it with: pip install 'hicache-reference[oracle]'  (or pip install hypothesis)"
)


def main(argv: list[str] | None = None) -> int:
    if importlib.util.find_spec("hypothesis") is None:
        print(MISSING, file=sys.stderr)
        return 2
    from spec.oracle.__main__ import main as oracle_main

    return oracle_main(argv)
