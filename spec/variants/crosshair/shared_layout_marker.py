"""F1-fanout broken: one layout marker for every namespace, ``.hicache.fanout``.

A fanout store of namespace ``_a`` then makes a flat store of ``_b`` in the same directory refuse it,
although ``_b``'s pages are flat: the marker must name its namespace (the contract it breaks, of
:func:`spec.models.file_names.layout_marker`).
"""

from __future__ import annotations

__all__ = ["layout_marker"]


def layout_marker(ns: str) -> str:
    """F1-fanout: the file a fanout store of namespace ``ns`` keeps in the directory itself (BROKEN: the
    namespace is left out of the name).

    pre: ns == "" or ns.startswith("_")
    post: __return__[len(".hicache") : -len(".fanout")] == ns
    """
    return ".hicache.fanout"  # BUG: the same marker for every namespace
