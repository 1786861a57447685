"""M3 broken: ``add`` of an expired key keeps its old birth instead of starting a lifetime born now.

The model's own :func:`spec.metadata_cache.add` does the work; only the broken step is changed.
"""

from __future__ import annotations

import math  # noqa: F401 -- used by the PEP 316 contracts in the docstring
from collections.abc import Hashable

from spec.metadata_cache import Births, contains
from spec.metadata_cache import add as model_add

__all__ = ["add"]


def add(births: Births, key: Hashable, now: float, ttl: float, max_entries: int | None) -> tuple[Births, int]:
    """M3 + M6: the births after ``add(key)`` at ``now`` (BROKEN: a re-add after expiry keeps the birth).

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    pre: max_entries is None or max_entries >= 1
    pre: max_entries is None or len(births) <= max_entries
    pre: all(b <= now for b in births.values())
    post: contains(__return__[0], key, now, ttl)
    post: not contains(births, key, now, ttl) or __return__ == (births, 0)
    post: contains(births, key, now, ttl) or __return__[0][key] == now
    post: max_entries is None or len(__return__[0]) <= max_entries
    post: all(births[k] == b for k, b in __return__[0].items() if k != key)
    post: __return__[1] <= 1
    """
    after, evicted = model_add(births, key, now, ttl, max_entries)
    if key in births and not contains(births, key, now, ttl):
        after[key] = births[key]  # BUG: the stale birth of the expired lifetime
    return after, evicted
