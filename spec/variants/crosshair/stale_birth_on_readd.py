"""M3 broken: ``add`` of an expired key keeps its old birth instead of starting a lifetime born now.

The model's own :func:`spec.metadata_cache.add` does the work; only its last step is changed.  The
contracts are the model's that the bug breaks (the others hold and would only spend the budget).
"""

from __future__ import annotations

import math  # noqa: F401 -- used by the PEP 316 contracts in the docstring
from collections.abc import Hashable

from spec.metadata_cache import Births, contains  # noqa: F401 -- contains: used by the contracts
from spec.metadata_cache import add as model_add

__all__ = ["add"]


def add(births: Births, key: Hashable, now: float, ttl: float, max_entries: int | None) -> tuple[Births, int]:
    """M3: the births after ``add(key)`` at ``now`` (BROKEN: a re-add after expiry keeps the old birth).

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    pre: max_entries is None or max_entries >= 1
    pre: max_entries is None or len(births) <= max_entries
    pre: all(b <= now for b in births.values())
    post: contains(__return__[0], key, now, ttl)
    post: contains(births, key, now, ttl) or __return__[0][key] == now
    """
    after, evicted = model_add(births, key, now, ttl, max_entries)
    after[key] = births.get(key, now)  # BUG: the stale birth, if the key had expired
    return after, evicted
