"""M2 broken: a key dies at exactly ``birth + ttl`` (the boundary is exclusive; the clause makes it live)."""

from __future__ import annotations

import math  # noqa: F401 -- used by the PEP 316 contracts in the docstring

__all__ = ["is_live"]


def is_live(birth: float, now: float, ttl: float) -> bool:
    """M2: alive at ``now`` when the TTL is -1 or ``now - birth <= ttl`` (BROKEN: ``<``).

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    post: (ttl != -1) or __return__
    post: (now != birth) or __return__
    post: (now - birth <= ttl) or (ttl == -1) or not __return__
    """
    return ttl == -1 or now - birth < ttl  # BUG: exclusive boundary
