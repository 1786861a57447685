"""PoolExistenceBeliefs variants (P1-P5).

* ``WRONG``: ``TextbookPoolBeliefs`` (correct: an OrderedDict of hashes and a Counter of in-flight
  references; a per-pool class, the oracle keeping one per pool name, P1) with one mistake each:
  oracle targets.
* ``WRONG_MODEL``: factories ``f(max_entries)`` of the spec registry (``spec.models.pool_beliefs``) whose
  pools (through ``_registry_of``) or whose registry carry one mistake, for the lock-step machine
  and the model checker.
* ``CORRECT``: what the oracle must pass.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence

from ..models import existence_cache as e
from ..models.pool_beliefs import POOL, PooledExistenceCacheSpec, PoolExistenceBeliefsSpec, refuse_bad_name

__all__ = [
    "CORRECT",
    "WRONG",
    "WRONG_MODEL",
    "ClearInflightAlsoDropsBeliefs",
    "ClearKeepsInflight",
    "CoveredStopsAtInflight",
    "CoveredTouchesInFlightPages",
    "InflightAsASet",
    "PoolBeliefsAnswersOnly",
    "PoolTrimmedInLen",
    "RegistryClearSkipsInflight",
    "SharedBeliefsRegistry",
    "TextbookPoolBeliefs",
    "TrackCountsDistinctPagesOnly",
    "UntrackGoesBelowZero",
]


class PoolBeliefsAnswersOnly:
    """Correct: one pool's beliefs (least recently used first) and in-flight reference counts, with no
    ``snapshot``: only the answers can be compared."""

    def __init__(self, max_entries: int) -> None:
        e.refuse_bad_capacity(max_entries)  # B1 (P1 as E1)
        self.max_entries = max_entries
        self.beliefs: OrderedDict[Hashable, None] = OrderedDict()
        self.inflight: Counter[Hashable] = Counter()

    def add(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        for h in hashes:
            self.beliefs[h] = None
            self.beliefs.move_to_end(h)
        while len(self.beliefs) > self.max_entries:
            self.beliefs.popitem(last=False)

    def contains(self, page_hash: Hashable) -> bool:
        if page_hash in self.beliefs:
            self.beliefs.move_to_end(page_hash)
            return True
        return False

    def contains_all(self, hashes: Iterable[Hashable]) -> bool:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        return all(self.contains(h) for h in hashes)

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        return all(self.contains(h) or h in self.inflight for h in hashes)

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        self.inflight.update(hashes)

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        for h in hashes:
            if h in self.inflight:
                self.inflight[h] -= 1
                if not self.inflight[h]:
                    del self.inflight[h]

    def invalidate_beyond(self, hashes: Sequence[Hashable], keep_pages: int) -> None:
        e.refuse_bad_input(POOL, keep_pages, hashes)  # B1 (E6, E8)
        for h in hashes[keep_pages:]:
            self.beliefs.pop(h, None)

    def clear(self) -> None:
        self.beliefs.clear()
        self.inflight.clear()

    def clear_inflight(self) -> None:
        self.inflight.clear()

    def __len__(self) -> int:
        return len(self.beliefs)


class TextbookPoolBeliefs(PoolBeliefsAnswersOnly):
    """Correct: the same, with ``snapshot`` (beliefs least recently used first, in-flight counts)."""

    def snapshot(self) -> tuple[list[Hashable], dict[Hashable, int]]:
        return list(self.beliefs), dict(self.inflight)


class InflightAsASet(TextbookPoolBeliefs):
    """P3: in-flight content kept as a set: a page in two launched writes is dropped by the first ack."""

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        for h in hashes:
            self.inflight[h] = 1

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        for h in hashes:
            self.inflight.pop(h, None)


class CoveredStopsAtInflight(TextbookPoolBeliefs):
    """P4: an early exit: once an in-flight page is reached the rest of the chain is taken as covered."""

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        for h in hashes:
            if self.contains(h):
                continue
            return h in self.inflight
        return True


class ClearKeepsInflight(TextbookPoolBeliefs):
    """P5: the pool's ``clear`` drops the beliefs but keeps the in-flight references."""

    def clear(self) -> None:
        self.beliefs.clear()


class PoolTrimmedInLen(PoolBeliefsAnswersOnly):
    """P2: the bound is enforced lazily, by ``__len__`` (no ``snapshot``): until someone asks the size the
    pool believes more pages than it may.  Asking ``len()`` after every step would hide it (O1)."""

    def add(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        for h in hashes:
            self.beliefs[h] = None
            self.beliefs.move_to_end(h)

    def __len__(self) -> int:
        while len(self.beliefs) > self.max_entries:
            self.beliefs.popitem(last=False)
        return len(self.beliefs)


WRONG: dict[str, tuple[type, str]] = {
    "TrimmedInLen": (PoolTrimmedInLen, "P2"),
    "InflightAsASet": (InflightAsASet, "P3"),
    "CoveredStopsAtInflight": (CoveredStopsAtInflight, "P4"),
    "ClearKeepsInflight": (ClearKeepsInflight, "P5"),
}

CORRECT: dict[str, type] = {
    "TextbookPoolBeliefs": TextbookPoolBeliefs,
    "PoolBeliefsAnswersOnly": PoolBeliefsAnswersOnly,
}


# -- wrong variants of the model -------------------------------------------------


class UntrackGoesBelowZero(PoolExistenceBeliefsSpec):
    """P3: untracking a page not in flight leaves a negative count, so a later track does not cover it."""

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        for h in hashes:
            self.inflight[h] = self.inflight.get(h, 0) - 1
            if self.inflight[h] == 0:
                del self.inflight[h]

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        live = {h for h, n in self.inflight.items() if n > 0}
        covered, self.beliefs = e.covers_all(self.beliefs, POOL, list(hashes), live)
        return covered

    def snapshot(self) -> tuple[list[Hashable], dict[Hashable, int]]:
        beliefs, inflight = super().snapshot()
        return beliefs, {h: n for h, n in inflight.items() if n > 0}


class TrackCountsDistinctPagesOnly(PoolExistenceBeliefsSpec):
    """P3: a chain naming a page twice takes one reference, not one per occurrence."""

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        super().track_inflight(dict.fromkeys(hashes))


class CoveredTouchesInFlightPages(PoolExistenceBeliefsSpec):
    """P4: an in-flight-only page is added as a belief when ``covered`` passes it."""

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
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
        refuse_bad_name(name)  # B1 (P1)
        return super().pool("shared")


class RegistryClearSkipsInflight(PooledExistenceCacheSpec):
    """P1, P5: the registry's ``clear`` drops beliefs but keeps in-flight references."""

    def clear(self) -> None:
        for pool in self.pools.values():
            pool.beliefs = []


def _registry_of(pool_class: type[PoolExistenceBeliefsSpec]) -> Callable[[int], PooledExistenceCacheSpec]:
    class Registry(PooledExistenceCacheSpec):
        def pool(self, name: Hashable) -> PoolExistenceBeliefsSpec:
            refuse_bad_name(name)  # B1 (P1)
            if name not in self.pools:
                self.pools[name] = pool_class(self.max_entries)
            return self.pools[name]

    Registry.__doc__ = pool_class.__doc__
    return Registry


WRONG_MODEL: dict[str, tuple[Callable[[int], PooledExistenceCacheSpec], str]] = {
    "UntrackGoesBelowZero": (_registry_of(UntrackGoesBelowZero), "P3"),
    "TrackCountsDistinctPagesOnly": (_registry_of(TrackCountsDistinctPagesOnly), "P3"),
    "CoveredTouchesInFlightPages": (_registry_of(CoveredTouchesInFlightPages), "P4"),
    "ClearInflightAlsoDropsBeliefs": (_registry_of(ClearInflightAlsoDropsBeliefs), "P5"),
    "SharedBeliefsRegistry": (SharedBeliefsRegistry, "P1"),
    "RegistryClearSkipsInflight": (RegistryClearSkipsInflight, "P1"),
}
