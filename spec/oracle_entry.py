"""The ``hicache-oracle`` console script: the oracle's CLI.

The oracle drives Hypothesis machines, so a run needs the ``oracle`` extra (Hypothesis and pytest); the
production package itself needs nothing but the standard library.  ``--help``, ``--list`` and
``COMPONENT --describe`` work without them; a run without them exits 2 with what to install
(``spec.oracle.__main__.MISSING``) instead of an ImportError traceback.
"""

from __future__ import annotations

from .oracle.__main__ import main

__all__ = ["main"]
