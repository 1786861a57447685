"""M3 broken: ``add`` of an expired key keeps its old birth instead of starting a lifetime born now.

The rule of :func:`spec.models.metadata_cache.add` without the bound (M6 plays no part in the bug), with the
contracts the bug breaks.
"""

from __future__ import annotations

import math  # noqa: F401 -- used by the PEP 316 contracts in the docstring
from collections.abc import Hashable

from ...models.metadata_cache import Births, contains

__all__ = ["add"]


def add(births: Births, key: Hashable, now: float, ttl: float) -> Births:
    """M3: the births after ``add(key)`` at ``now`` (BROKEN: a re-add after expiry keeps the old birth).

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    pre: all(b <= now for b in births.values())
    post: contains(__return__, key, now, ttl)
    post: contains(births, key, now, ttl) or __return__[key] == now
    """
    if contains(births, key, now, ttl):
        return births  # a live key keeps its birth (hard TTL)
    after = {k: b for k, b in births.items() if k != key}
    after[key] = births.get(key, now)  # BUG: the stale birth of the expired lifetime
    return after
