"""Deliberately wrong PooledExistenceCache variants (each breaks one P clause).

Each is the spec registry (``spec.pool_beliefs``) whose pools carry one
plausible mistake.  ``VARIANTS`` maps a name to a factory ``f(max_entries)``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from spec import existence_cache as e
from spec.pool_beliefs import POOL, PooledExistenceCacheSpec, PoolExistenceBeliefsSpec

__all__ = ["VARIANTS"]


class UntrackGoesBelowZero(PoolExistenceBeliefsSpec):
    """P3: untracking a page not in flight leaves a negative count, so a later track does not cover it."""

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            self.inflight[h] = self.inflight.get(h, 0) - 1
            if self.inflight[h] == 0:
                del self.inflight[h]

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        live = {h for h, n in self.inflight.items() if n > 0}
        covered, self.beliefs = e.covers_all(self.beliefs, POOL, list(hashes), live)
        return covered

    def snapshot(self) -> tuple[list[Hashable], dict[Hashable, int]]:
        beliefs, inflight = super().snapshot()
        return beliefs, {h: n for h, n in inflight.items() if n > 0}


class TrackCountsDistinctPagesOnly(PoolExistenceBeliefsSpec):
    """P3: a chain naming a page twice takes one reference, not one per occurrence."""

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        super().track_inflight(dict.fromkeys(hashes))


class CoveredTouchesInFlightPages(PoolExistenceBeliefsSpec):
    """P4: an in-flight-only page is added as a belief when ``covered`` passes it."""

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        for h in hashes:
            if (POOL, h) in self.beliefs or h in self.inflight:
                self.beliefs = e.trim(e.touch(self.beliefs, (POOL, h)), self.max_entries)
            else:
                return False
        return True


class ClearInflightAlsoDropsBeliefs(PoolExistenceBeliefsSpec):
    """P5: ``clear_inflight`` drops the beliefs too."""

    def clear_inflight(self) -> None:
        self.clear()


class SharedBeliefsRegistry(PooledExistenceCacheSpec):
    """P1, P2: every name gets the same pool object, so pools share beliefs and one bound."""

    def pool(self, name: Hashable) -> PoolExistenceBeliefsSpec:
        return super().pool("shared")


class RegistryClearSkipsInflight(PooledExistenceCacheSpec):
    """P1, P5: the registry's ``clear`` drops beliefs but keeps in-flight references."""

    def clear(self) -> None:
        for pool in self.pools.values():
            pool.beliefs = []


def _registry_of(pool_class: type[PoolExistenceBeliefsSpec]) -> Callable[[int], PooledExistenceCacheSpec]:
    class Registry(PooledExistenceCacheSpec):
        def pool(self, name: Hashable) -> PoolExistenceBeliefsSpec:
            if name not in self.pools:
                self.pools[name] = pool_class(self.max_entries)
            return self.pools[name]

    Registry.__doc__ = pool_class.__doc__
    return Registry


VARIANTS: dict[str, Callable[[int], PooledExistenceCacheSpec]] = {
    "UntrackGoesBelowZero": _registry_of(UntrackGoesBelowZero),
    "TrackCountsDistinctPagesOnly": _registry_of(TrackCountsDistinctPagesOnly),
    "CoveredTouchesInFlightPages": _registry_of(CoveredTouchesInFlightPages),
    "ClearInflightAlsoDropsBeliefs": _registry_of(ClearInflightAlsoDropsBeliefs),
    "SharedBeliefsRegistry": SharedBeliefsRegistry,
    "RegistryClearSkipsInflight": RegistryClearSkipsInflight,
}
