"""F1-fanout broken: one layout marker for every namespace, ``.hicache.fanout``.

A fanout store of namespace ``_a`` then makes a flat store of ``_b`` in the same directory refuse it,
although ``_b``'s pages are flat: the marker must name its namespace.
"""

from __future__ import annotations

from spec.file_names import is_temp, key_of  # noqa: F401 -- used by the contracts in the docstring

__all__ = ["layout_marker"]


def layout_marker(ns: str) -> str:
    """F1-fanout: the file a fanout store of namespace ``ns`` keeps in the directory itself (BROKEN: the
    namespace is left out of the name).

    pre: ns == "" or ns.startswith("_")
    pre: "/" not in ns and chr(0) not in ns
    post: "/" not in __return__ and __return__.startswith(".")
    post: not __return__.endswith(".bin") and key_of(__return__, ns) is None
    post: not is_temp(__return__)
    post: __return__[len(".hicache") : -len(".fanout")] == ns
    """
    return ".hicache.fanout"  # BUG: the same marker for every namespace
