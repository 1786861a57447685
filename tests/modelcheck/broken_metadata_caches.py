"""Deliberately wrong MetadataCache variants: each must be caught by the model checker at a known depth.

Kept (never fixed) so that the tests can prove the checker is able to fail.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from hicache.metadata_cache import MetadataCache

__all__ = ["EvictsTheNewest", "ExclusiveBoundary", "KeepsStaleBirth", "forgets_the_nth_live_key"]


def forgets_the_nth_live_key(n: int) -> Callable[..., Any]:
    """A factory of caches that silently drop a new key while exactly ``n - 1`` keys are live.

    The shortest sequence that shows it is ``n`` adds of distinct keys: ``n - 1``
    adds to get there (no shorter path holds ``n - 1`` live keys), one to trip.
    """

    class ForgetsTheNthLiveKey(MetadataCache):
        def add(self, key: Hashable) -> None:
            if len(self) == n - 1 and key not in self.snapshot_keys():
                return
            super().add(key)

        def snapshot_keys(self) -> set[Hashable]:
            return {k for k, _ in self.snapshot()}

    def build(ttl: float, **kwargs: Any) -> MetadataCache:
        return ForgetsTheNthLiveKey(ttl, **kwargs)

    return build


class EvictsTheNewest(MetadataCache):
    """M6 broken: a full cache evicts its newest entry instead of its oldest (shortest: 3 ops at cap 2)."""

    def add(self, key: Hashable) -> None:
        with self._lock:
            now = self._clock()
            self._reclaim(now)
            if key in self._births:
                return
            if self._max_entries is not None and len(self._births) >= self._max_entries:
                self._births.popitem(last=True)
            self._births[key] = now


class ExclusiveBoundary(MetadataCache):
    """M2 broken in ``contains`` only: dead at exactly birth + ttl (shortest: add, contains at TTL 0)."""

    def __init__(self, ttl: float, **kwargs: Any) -> None:
        super().__init__(ttl, **kwargs)
        self.contains = self._exclusive  # type: ignore[method-assign]

    def _exclusive(self, key: Hashable) -> bool:
        with self._lock:
            birth = self._births.get(key)
            return birth is not None and (self._ttl < 0 or self._clock() - birth < self._ttl)


class KeepsStaleBirth(MetadataCache):
    """M3 broken: re-adding an expired, not yet purged key keeps its old birth (add, expire past, add)."""

    def add(self, key: Hashable) -> None:
        with self._lock:
            if key in self._births:
                return
        super().add(key)
