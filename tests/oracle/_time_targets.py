"""Fixture for the oracle's patched time control: hard-TTL sets that read ``time.monotonic()`` themselves.

The classes that read the clock live here; ``tests/oracle/_time_subclass.py``
reaches them from another module (a subclass, a factory), which does not import
``time`` at all: the oracle must patch this module too.
"""

from __future__ import annotations

import time
from collections.abc import Hashable

from spec.models.metadata_cache import refuse_bad_key, refuse_bad_settings

__all__ = ["MonotonicTTLSet", "MonotonicTTLSetExclusive"]


class MonotonicTTLSet:
    """Correct (M2, M3, M4): a hard-TTL set of keys that reads ``time.monotonic()`` itself."""

    def __init__(self, ttl_seconds: float) -> None:
        refuse_bad_settings(ttl_seconds)  # B1 (M1)
        self.ttl = ttl_seconds
        self.births: dict[Hashable, float] = {}

    def live(self, birth: float | None, now: float) -> bool:
        return birth is not None and (self.ttl == -1 or now - birth <= self.ttl)

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        now = time.monotonic()
        if not self.live(self.births.get(key), now):
            self.births[key] = now  # hard TTL: a live key keeps its birth

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        return self.live(self.births.get(key), time.monotonic())


class MonotonicTTLSetExclusive(MonotonicTTLSet):
    """M2: ``<`` for ``<=``: a belief dies at exactly birth + ttl."""

    def live(self, birth: float | None, now: float) -> bool:
        return birth is not None and (self.ttl == -1 or now - birth < self.ttl)
