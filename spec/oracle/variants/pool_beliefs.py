"""PoolExistenceBeliefs variants: a textbook per-pool class, and the same with one mistake each.

``TextbookPoolBeliefs`` is correct (P2-P5): an OrderedDict of hashes and a
Counter of in-flight references.  It is a per-pool class without a registry:
the oracle keeps one per pool name (P1).  The catalogue of the oracle's tests
adds these to ``tests/variants/pool_beliefs.py``.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Hashable, Iterable, Sequence

__all__ = [
    "CORRECT",
    "WRONG",
    "ClearKeepsInflight",
    "CoveredStopsAtInflight",
    "InflightAsASet",
    "PoolBeliefsAnswersOnly",
    "TextbookPoolBeliefs",
    "TrimmedInLen",
]


class PoolBeliefsAnswersOnly:
    """Correct: one pool's beliefs (least recently used first) and in-flight reference counts, with no
    ``snapshot``: only the answers can be compared."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.beliefs: OrderedDict[Hashable, None] = OrderedDict()
        self.inflight: Counter[Hashable] = Counter()

    def add(self, hashes: Iterable[Hashable]) -> None:
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
        return all(self.contains(h) for h in hashes)

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        return all(self.contains(h) or h in self.inflight for h in hashes)

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        self.inflight.update(hashes)

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            if h in self.inflight:
                self.inflight[h] -= 1
                if not self.inflight[h]:
                    del self.inflight[h]

    def invalidate_beyond(self, hashes: Sequence[Hashable], keep_pages: int) -> None:
        if keep_pages < 0:
            raise ValueError(f"keep_pages must be >= 0, got {keep_pages!r}")
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
        for h in hashes:
            self.inflight[h] = 1

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            self.inflight.pop(h, None)


class CoveredStopsAtInflight(TextbookPoolBeliefs):
    """P4: an early exit: once an in-flight page is reached the rest of the chain is taken as covered."""

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        for h in hashes:
            if self.contains(h):
                continue
            return h in self.inflight
        return True


class ClearKeepsInflight(TextbookPoolBeliefs):
    """P5: the pool's ``clear`` drops the beliefs but keeps the in-flight references."""

    def clear(self) -> None:
        self.beliefs.clear()


class TrimmedInLen(PoolBeliefsAnswersOnly):
    """P2: the bound is enforced lazily, by ``__len__`` (no ``snapshot``): until someone asks the size the
    pool believes more pages than it may.  Asking ``len()`` after every step would hide it (O1)."""

    def add(self, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            self.beliefs[h] = None
            self.beliefs.move_to_end(h)

    def __len__(self) -> int:
        while len(self.beliefs) > self.max_entries:
            self.beliefs.popitem(last=False)
        return len(self.beliefs)


WRONG: dict[str, tuple[type, str]] = {
    "TrimmedInLen": (TrimmedInLen, "P2"),
    "InflightAsASet": (InflightAsASet, "P3"),
    "CoveredStopsAtInflight": (CoveredStopsAtInflight, "P4"),
    "ClearKeepsInflight": (ClearKeepsInflight, "P5"),
}

CORRECT: dict[str, type] = {
    "TextbookPoolBeliefs": TextbookPoolBeliefs,
    "PoolBeliefsAnswersOnly": PoolBeliefsAnswersOnly,
}
