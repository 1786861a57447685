"""Deliberately wrong StorageExistenceCache variants (each breaks one E clause).

Each is the spec (``spec.existence_cache``) with one plausible mistake, so the
lock-step machine must tell it apart from the spec.  ``VARIANTS`` is the
catalogue that ``tests/stateful/test_machines_catch_wrong_variants.py`` (and
the oracle) runs; add a class with a docstring naming the mistake and the
clause it breaks, and list it there.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence

from spec.existence_cache import StorageExistenceCacheSpec, touch, trim

__all__ = ["VARIANTS"]


class AddKeepsTheOldPositionOfAKnownPage(StorageExistenceCacheSpec):
    """E2: re-adding a believed page does not make it most recently used (set-style ``add``)."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            if (pool, h) not in self.beliefs:
                self.beliefs = [*self.beliefs, (pool, h)]
        self.beliefs = trim(self.beliefs, self.max_entries)


class BoundPerPool(StorageExistenceCacheSpec):
    """E2: each pool is bounded on its own, instead of one global LRU over all pools."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            self.beliefs = touch(self.beliefs, (pool, h))
        mine = [b for b in self.beliefs if b[0] == pool]
        dropped = set(mine[: max(0, len(mine) - self.max_entries)])
        self.beliefs = [b for b in self.beliefs if b not in dropped]


class ContainsDoesNotTouch(StorageExistenceCacheSpec):
    """E3: a hit answers True but leaves the LRU order alone."""

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        return (pool, page_hash) in self.beliefs


class ContainsAllTouchesNothingOnAMiss(StorageExistenceCacheSpec):
    """E4: all-or-nothing: when a page is missing, the believed prefix is not touched either."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        chain = list(hashes)
        if all((pool, h) in self.beliefs for h in chain):
            return super().contains_all(pool, chain)
        return False


class ContainsAllTouchesPastTheFirstMiss(StorageExistenceCacheSpec):
    """E4: every believed page is touched, even those after the first miss."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        answer = True
        for h in hashes:
            if (pool, h) in self.beliefs:
                self.beliefs = touch(self.beliefs, (pool, h))
            else:
                answer = False
        return answer


class ContainsAllReadsTheChainTwice(StorageExistenceCacheSpec):
    """E8: checks the chain, then walks it again to touch: a one-shot generator is empty the second time."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        if not all((pool, h) in self.beliefs for h in hashes):
            return False
        for h in hashes:
            self.beliefs = touch(self.beliefs, (pool, h))
        return True


class ExtraCoverIsAdded(StorageExistenceCacheSpec):
    """E5: a page covered only by ``extra_cover`` is added as a belief."""

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        for h in hashes:
            if (pool, h) in self.beliefs or h in extra_cover:
                self.beliefs = trim(touch(self.beliefs, (pool, h)), self.max_entries)
            else:
                return False
        return True


class NegativeKeepPagesSlicesFromTheEnd(StorageExistenceCacheSpec):
    """E6: a negative ``keep_pages`` is used as a Python slice bound instead of being a ValueError."""

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        dropped = list(hashes)[keep_pages:]
        self.beliefs = [b for b in self.beliefs if not (b[0] == pool and b[1] in dropped)]


class ZeroCapacityRemembersOne(StorageExistenceCacheSpec):
    """E1: ``max_entries=0`` is treated as 1 instead of remembering nothing."""

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        super().__init__(max(1, max_entries))


VARIANTS: dict[str, type[StorageExistenceCacheSpec]] = {
    cls.__name__: cls
    for cls in (
        AddKeepsTheOldPositionOfAKnownPage,
        BoundPerPool,
        ContainsDoesNotTouch,
        ContainsAllTouchesNothingOnAMiss,
        ContainsAllTouchesPastTheFirstMiss,
        ContainsAllReadsTheChainTwice,
        ExtraCoverIsAdded,
        NegativeKeepPagesSlicesFromTheEnd,
        ZeroCapacityRemembersOne,
    )
}
