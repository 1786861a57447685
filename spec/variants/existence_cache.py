"""StorageExistenceCache variants (E1-E8).

* ``WRONG``: ``TextbookExistenceLRU`` (correct, the benchmark's textbook LRU: one OrderedDict keyed
  by ``(pool, hash)``, touched with ``move_to_end`` page by page) with one method overridden by a
  mistake an optimizer could plausibly make: oracle targets.
* ``WRONG_MODEL``: the spec (``spec.models.existence_cache``) with one mistake each, which the lock-step
  machine and the model checker must tell apart from the spec.
* ``CORRECT``: what the oracle must pass.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Hashable, Iterable, Sequence

from ..models.existence_cache import (
    StorageExistenceCacheSpec,
    refuse_bad_capacity,
    refuse_bad_input,
    touch,
    trim,
)

__all__ = [
    "CORRECT",
    "WRONG",
    "WRONG_MODEL",
    "AddKeepsTheOldPositionOfAKnownPage",
    "BatchEvictionCountsKnownPages",
    "Belief",
    "BoundPerPool",
    "ContainsAllReadsTheChainTwice",
    "ContainsAllSizesTheChain",
    "ContainsAllTouchesInReverse",
    "ContainsAllTouchesNothingOnAMiss",
    "ContainsAllTouchesPastTheFirstMiss",
    "ContainsDoesNotTouch",
    "ExistenceLRUAnswersOnly",
    "ExtraCoverCheckedFirst",
    "ExtraCoverIsAdded",
    "InvalidateBeyondOffByOne",
    "InvalidateBeyondTouchesKeptPages",
    "NegativeKeepPagesSlicesFromTheEnd",
    "TextbookExistenceLRU",
    "TrimBeforeInsert",
    "TrimmedInLen",
    "ZeroCapacityRemembersOne",
]

Belief = tuple[Hashable, Hashable]


class ExistenceLRUAnswersOnly:
    """Correct: one OrderedDict of ``(pool, hash)`` beliefs, least recently used first, with no
    ``snapshot``: only the answers can be compared."""

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        refuse_bad_capacity(max_entries)  # B1 (E1)
        self.max_entries = max_entries
        self.beliefs: OrderedDict[Belief, None] = OrderedDict()

    def touch(self, belief: Belief) -> None:
        self.beliefs[belief] = None
        self.beliefs.move_to_end(belief)

    def trim(self) -> None:
        while len(self.beliefs) > self.max_entries:
            self.beliefs.popitem(last=False)

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        for h in hashes:
            self.touch((pool, h))
        self.trim()

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        refuse_bad_input(pool)  # B1 (E1)
        if (pool, page_hash) in self.beliefs:
            self.beliefs.move_to_end((pool, page_hash))
            return True
        return False

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        return self.covers_all(pool, hashes)

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        refuse_bad_input(pool, hashes=hashes, extra_cover=extra_cover)  # B1 (E5, E8)
        for h in hashes:
            if (pool, h) in self.beliefs:
                self.beliefs.move_to_end((pool, h))
            elif h not in extra_cover:
                return False
        return True

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        refuse_bad_input(pool, keep_pages, hashes)  # B1 (E6, E8)
        for h in hashes[keep_pages:]:
            self.beliefs.pop((pool, h), None)

    def clear(self) -> None:
        self.beliefs.clear()

    def __len__(self) -> int:
        return len(self.beliefs)


class TextbookExistenceLRU(ExistenceLRUAnswersOnly):
    """Correct: the same, with ``snapshot`` (the beliefs, least recently used first)."""

    def snapshot(self) -> list[Belief]:
        return list(self.beliefs)


class TrimBeforeInsert(TextbookExistenceLRU):
    """E2: "make room first": a full cache evicts its least recently used belief before each page,
    even when the page is already believed and nothing needed to go."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        for h in hashes:
            if self.beliefs and len(self.beliefs) >= self.max_entries:
                self.beliefs.popitem(last=False)
            if self.max_entries > 0:
                self.touch((pool, h))


class BatchEvictionCountsKnownPages(TextbookExistenceLRU):
    """E2: the batch's evictions are precomputed as ``len(beliefs) + len(chain) - max_entries``,
    counting already-believed (and repeated) pages as new: the cache drops too many."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        chain = list(hashes)
        overflow = len(self.beliefs) + len(chain) - self.max_entries
        for h in chain:
            self.touch((pool, h))
        for _ in range(min(max(0, overflow), len(self.beliefs))):
            self.beliefs.popitem(last=False)


class ExtraCoverCheckedFirst(TextbookExistenceLRU):
    """E5: the cheap set test is done first (``h in extra_cover or believed``): a believed page that is
    also in ``extra_cover`` is not touched."""

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        refuse_bad_input(pool, hashes=hashes, extra_cover=extra_cover)  # B1 (E5, E8)
        for h in hashes:
            if h in extra_cover:
                continue
            if (pool, h) not in self.beliefs:
                return False
            self.beliefs.move_to_end((pool, h))
        return True


class InvalidateBeyondOffByOne(TextbookExistenceLRU):
    """E6: ``hashes[keep_pages - 1:]``: the last kept page is invalidated too."""

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        refuse_bad_input(pool, keep_pages, hashes)  # B1 (E6, E8)
        for h in hashes[max(0, keep_pages - 1) :]:
            self.beliefs.pop((pool, h), None)


class InvalidateBeyondTouchesKeptPages(TextbookExistenceLRU):
    """E6: implemented as "drop the chain, re-add its first keep_pages": the kept pages become most
    recently used (and come back even when they were not believed)."""

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        refuse_bad_input(pool, keep_pages, hashes)  # B1 (E6, E8)
        for h in hashes:
            self.beliefs.pop((pool, h), None)
        self.add(pool, hashes[:keep_pages])


class ContainsAllTouchesInReverse(TextbookExistenceLRU):
    """E4: checks the chain first, then touches it from the end (a batched move): the chain's first
    page ends up most recently used instead of its last."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        chain = list(hashes)
        for i, h in enumerate(chain):
            if (pool, h) not in self.beliefs:
                for known in reversed(chain[:i]):
                    self.beliefs.move_to_end((pool, known))
                return False
        for h in reversed(chain):
            self.beliefs.move_to_end((pool, h))
        return True


class ContainsAllSizesTheChain(TextbookExistenceLRU):
    """E8: the walk is sized up front with ``len(hashes)`` (to preallocate): a one-shot generator,
    which has no length, raises TypeError."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        size = len(hashes)  # type: ignore[arg-type]
        chain = [h for _, h in zip(range(size), hashes, strict=False)]
        return self.covers_all(pool, chain)


class TrimmedInLen(ExistenceLRUAnswersOnly):
    """E2: the bound is enforced lazily, by ``__len__``: ``add`` never drops a belief, so until someone
    asks the size the cache believes more pages than it may.  An oracle that asks ``len()`` after every
    step trims it at once and never sees the mistake (O1)."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        for h in hashes:
            self.touch((pool, h))

    def __len__(self) -> int:
        self.trim()
        return len(self.beliefs)


WRONG: dict[str, tuple[type, str]] = {
    "TrimmedInLen": (TrimmedInLen, "E2"),
    "TrimBeforeInsert": (TrimBeforeInsert, "E2"),
    "BatchEvictionCountsKnownPages": (BatchEvictionCountsKnownPages, "E2"),
    "ExtraCoverCheckedFirst": (ExtraCoverCheckedFirst, "E5"),
    "InvalidateBeyondOffByOne": (InvalidateBeyondOffByOne, "E6"),
    "InvalidateBeyondTouchesKeptPages": (InvalidateBeyondTouchesKeptPages, "E6"),
    "ContainsAllTouchesInReverse": (ContainsAllTouchesInReverse, "E4"),
    "ContainsAllSizesTheChain": (ContainsAllSizesTheChain, "E8"),
}

CORRECT: dict[str, type] = {
    "TextbookExistenceLRU": TextbookExistenceLRU,
    "ExistenceLRUAnswersOnly": ExistenceLRUAnswersOnly,
}


# -- wrong variants of the model -------------------------------------------------


class AddKeepsTheOldPositionOfAKnownPage(StorageExistenceCacheSpec):
    """E2: re-adding a believed page does not make it most recently used (set-style ``add``)."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        for h in hashes:
            if (pool, h) not in self.beliefs:
                self.beliefs = [*self.beliefs, (pool, h)]
        self.beliefs = trim(self.beliefs, self.max_entries)


class BoundPerPool(StorageExistenceCacheSpec):
    """E2: each pool is bounded on its own, instead of one global LRU over all pools."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        for h in hashes:
            self.beliefs = touch(self.beliefs, (pool, h))
        mine = [b for b in self.beliefs if b[0] == pool]
        dropped = set(mine[: max(0, len(mine) - self.max_entries)])
        self.beliefs = [b for b in self.beliefs if b not in dropped]


class ContainsDoesNotTouch(StorageExistenceCacheSpec):
    """E3: a hit answers True but leaves the LRU order alone."""

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        refuse_bad_input(pool)  # B1 (E1)
        return (pool, page_hash) in self.beliefs


class ContainsAllTouchesNothingOnAMiss(StorageExistenceCacheSpec):
    """E4: all-or-nothing: when a page is missing, the believed prefix is not touched either."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
        chain = list(hashes)
        if all((pool, h) in self.beliefs for h in chain):
            return super().contains_all(pool, chain)
        return False


class ContainsAllTouchesPastTheFirstMiss(StorageExistenceCacheSpec):
    """E4: every believed page is touched, even those after the first miss."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
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
        refuse_bad_input(pool, hashes=hashes)  # B1 (E1, E8)
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
        refuse_bad_input(pool, hashes=hashes, extra_cover=extra_cover)  # B1 (E5, E8)
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
        refuse_bad_capacity(max_entries)  # B1 (E1): the one mistake is what 0 means
        super().__init__(max(1, max_entries))


WRONG_MODEL: dict[str, tuple[type[StorageExistenceCacheSpec], str]] = {
    "AddKeepsTheOldPositionOfAKnownPage": (AddKeepsTheOldPositionOfAKnownPage, "E2"),
    "BoundPerPool": (BoundPerPool, "E2"),
    "ContainsDoesNotTouch": (ContainsDoesNotTouch, "E3"),
    "ContainsAllTouchesNothingOnAMiss": (ContainsAllTouchesNothingOnAMiss, "E4"),
    "ContainsAllTouchesPastTheFirstMiss": (ContainsAllTouchesPastTheFirstMiss, "E4"),
    "ContainsAllReadsTheChainTwice": (ContainsAllReadsTheChainTwice, "E8"),
    "ExtraCoverIsAdded": (ExtraCoverIsAdded, "E5"),
    "NegativeKeepPagesSlicesFromTheEnd": (NegativeKeepPagesSlicesFromTheEnd, "E6"),
    "ZeroCapacityRemembersOne": (ZeroCapacityRemembersOne, "E1"),
}
