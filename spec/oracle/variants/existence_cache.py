"""StorageExistenceCache variants: the benchmark's textbook LRU, and the same with one mistake each.

``TextbookExistenceLRU`` is correct (E1-E8): one OrderedDict keyed by
``(pool, hash)``, touched with ``move_to_end`` page by page.  Each wrong variant
overrides one method with a mistake an optimizer could plausibly make.  The
catalogue of the oracle's tests adds these to ``tests/variants/existence_cache.py``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Hashable, Iterable, Sequence

__all__ = [
    "CORRECT",
    "WRONG",
    "BatchEvictionCountsKnownPages",
    "ContainsAllSizesTheChain",
    "ContainsAllTouchesInReverse",
    "ExistenceLRUAnswersOnly",
    "ExtraCoverCheckedFirst",
    "InvalidateBeyondOffByOne",
    "InvalidateBeyondTouchesKeptPages",
    "TextbookExistenceLRU",
    "TrimBeforeInsert",
    "TrimmedInLen",
]

Belief = tuple[Hashable, Hashable]


class ExistenceLRUAnswersOnly:
    """Correct: one OrderedDict of ``(pool, hash)`` beliefs, least recently used first, with no
    ``snapshot``: only the answers can be compared."""

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        self.max_entries = max_entries
        self.beliefs: OrderedDict[Belief, None] = OrderedDict()

    def touch(self, belief: Belief) -> None:
        self.beliefs[belief] = None
        self.beliefs.move_to_end(belief)

    def trim(self) -> None:
        while len(self.beliefs) > self.max_entries:
            self.beliefs.popitem(last=False)

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            self.touch((pool, h))
        self.trim()

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        if (pool, page_hash) in self.beliefs:
            self.beliefs.move_to_end((pool, page_hash))
            return True
        return False

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        return self.covers_all(pool, hashes)

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        for h in hashes:
            if (pool, h) in self.beliefs:
                self.beliefs.move_to_end((pool, h))
            elif h not in extra_cover:
                return False
        return True

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        if keep_pages < 0:
            raise ValueError(f"keep_pages must be >= 0, got {keep_pages!r}")
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
        for h in hashes:
            if self.beliefs and len(self.beliefs) >= self.max_entries:
                self.beliefs.popitem(last=False)
            if self.max_entries > 0:
                self.touch((pool, h))


class BatchEvictionCountsKnownPages(TextbookExistenceLRU):
    """E2: the batch's evictions are precomputed as ``len(beliefs) + len(chain) - max_entries``,
    counting already-believed (and repeated) pages as new: the cache drops too many."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
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
        if keep_pages < 0:
            raise ValueError(f"keep_pages must be >= 0, got {keep_pages!r}")
        for h in hashes[max(0, keep_pages - 1) :]:
            self.beliefs.pop((pool, h), None)


class InvalidateBeyondTouchesKeptPages(TextbookExistenceLRU):
    """E6: implemented as "drop the chain, re-add its first keep_pages": the kept pages become most
    recently used (and come back even when they were not believed)."""

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        if keep_pages < 0:
            raise ValueError(f"keep_pages must be >= 0, got {keep_pages!r}")
        for h in hashes:
            self.beliefs.pop((pool, h), None)
        self.add(pool, hashes[:keep_pages])


class ContainsAllTouchesInReverse(TextbookExistenceLRU):
    """E4: checks the chain first, then touches it from the end (a batched move): the chain's first
    page ends up most recently used instead of its last."""

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
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
        size = len(hashes)  # type: ignore[arg-type]
        chain = [h for _, h in zip(range(size), hashes, strict=False)]
        return self.covers_all(pool, chain)


class TrimmedInLen(ExistenceLRUAnswersOnly):
    """E2: the bound is enforced lazily, by ``__len__``: ``add`` never drops a belief, so until someone
    asks the size the cache believes more pages than it may.  An oracle that asks ``len()`` after every
    step trims it at once and never sees the mistake (O1)."""

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
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
