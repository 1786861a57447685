"""Per-pool existence beliefs with in-flight reference counts (docs/SEMANTICS.md P1-P5).

Newer engines keep one bounded belief set per memory pool (so one pool can no longer evict another's
beliefs) and, instead of passing an ``extra_cover`` set, count the in-flight device-to-host copies whose
content storage will acknowledge.  ``covered`` answers "is every page of this chain stored or on its
way?" for write-through admission.

Complexity: ``contains``, ``__len__`` O(1); ``contains_all``, ``covered``, ``add``, ``invalidate_beyond``,
``track_inflight``, ``untrack_inflight`` O(pages), plus O(1) per evicted belief; ``clear``, ``snapshot``
O(n).  Thread model: not thread-safe by design; one caller thread at deterministic points, and every
operation is deterministic.  Invariants: docs/ARCHITECTURE.md, "Design notes".
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Hashable, Iterable, Sequence

from hicache._lru_walks import (
    as_chain,
    believe,
    check_pool,
    check_sequence,
    forget,
    touch_all,
    touch_all_or_covered,
)
from hicache._validate import check_int

__all__ = ["PoolExistenceBeliefs", "PoolSnapshot", "PooledExistenceCache"]

PoolSnapshot = tuple[list[Hashable], dict[Hashable, int]]


class PoolExistenceBeliefs:
    """One pool's bounded LRU of page beliefs plus in-flight reference counts (P2-P5).

    ``max_entries`` is an int >= 0.  Not thread-safe.  Raises
    ``TypeError``/``ValueError`` naming the parameter on bad input, before any
    state changes (B1).

    >>> pool = PoolExistenceBeliefs(max_entries=4)
    >>> pool.add(["a", "b"])
    >>> pool.track_inflight(["c", "c"])
    >>> pool.covered(["a", "c"]), pool.contains_all(["a", "c"])
    (True, False)
    >>> pool.untrack_inflight(["c"]); pool.snapshot()
    (['b', 'a'], {'c': 1})
    """

    __slots__ = ("_beliefs", "_inflight", "_max_entries")

    def __init__(self, max_entries: int) -> None:
        self._max_entries: int = check_int("max_entries", max_entries, minimum=0)  # type: ignore[assignment]
        self._beliefs: OrderedDict[Hashable, None] = OrderedDict()
        self._inflight: Counter[Hashable] = Counter()

    @property
    def max_entries(self) -> int:
        """This pool's own bound on beliefs."""
        return self._max_entries

    def add(self, hashes: Iterable[Hashable]) -> None:
        """Make each page most recently used in order, then trim to this pool's bound (P2, E2).

        O(pages + evicted).  Raises ``TypeError`` if ``hashes`` is not iterable.
        """
        believe(self._beliefs, as_chain("hashes", hashes), self._max_entries)

    def contains(self, page_hash: Hashable) -> bool:
        """Return True if believed, and then the page becomes most recently used (P2, E3).  O(1)."""
        beliefs = self._beliefs
        if page_hash in beliefs:
            beliefs.move_to_end(page_hash)
            return True
        return False

    def contains_all(self, hashes: Iterable[Hashable]) -> bool:
        """Return True if every page is believed; touches pages in order up to the first miss (P2, E4).

        O(pages).  An empty chain is ``True``.
        """
        chain = hashes if type(hashes) is list else as_chain("hashes", hashes)
        return touch_all(self._beliefs, chain)

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        """Return True if every page is believed or in flight; only believed pages are touched (P4).

        O(pages).  With nothing in flight this is exactly ``contains_all``.
        """
        chain = as_chain("hashes", hashes)
        inflight = self._inflight
        if not inflight:
            return self.contains_all(chain)
        return touch_all_or_covered(self._beliefs, chain, inflight)

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        """One in-flight reference per occurrence (P3).  O(pages)."""
        self._inflight.update(as_chain("hashes", hashes))

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        """Drop one reference per occurrence; at zero the page is no longer in flight (P3).

        Untracking a page that is not in flight is a no-op.  O(pages).
        """
        inflight = self._inflight
        for page_hash in as_chain("hashes", hashes):
            count = inflight.get(page_hash)
            if count is None:
                continue
            if count == 1:
                del inflight[page_hash]
            else:
                inflight[page_hash] = count - 1

    def invalidate_beyond(self, hashes: Sequence[Hashable], keep_pages: int) -> None:
        """Drop the beliefs for ``hashes[keep_pages:]`` (P2, E6).

        Raises ``ValueError`` for a negative ``keep_pages``, ``TypeError`` for a
        non-int ``keep_pages`` or a ``hashes`` that is not a sequence.
        """
        check_int("keep_pages", keep_pages, minimum=0)
        check_sequence("hashes", hashes)
        forget(self._beliefs, hashes[keep_pages:])

    def clear(self) -> None:
        """Drop every belief and every in-flight reference (P5).  O(n)."""
        self._beliefs.clear()
        self._inflight.clear()

    def clear_inflight(self) -> None:
        """Drop every in-flight reference, keeping the beliefs (P5).  O(in flight)."""
        self._inflight.clear()

    def __len__(self) -> int:
        """Return the number of beliefs in this pool.  O(1)."""
        return len(self._beliefs)

    def snapshot(self) -> PoolSnapshot:
        """(beliefs least recently used first, in-flight reference counts).  O(n)."""
        return list(self._beliefs), dict(self._inflight)

    def check_invariants(self) -> None:
        """Assert the internal invariants (O(n): for tests, not for production)."""
        assert len(self._beliefs) <= self._max_entries, "bound exceeded"
        assert all(value is None for value in self._beliefs.values()), "values are not None"
        assert all(type(n) is int and n >= 1 for n in self._inflight.values()), "non-positive count"


class PooledExistenceCache:
    """The registry: one ``PoolExistenceBeliefs(max_entries)`` per pool name, created on first use (P1).

    >>> registry = PooledExistenceCache(max_entries=8)
    >>> registry.pool("kv") is registry.pool("kv")
    True
    >>> registry.pool("kv").add(["a"]); registry.clear(); len(registry.pool("kv"))
    0
    """

    __slots__ = ("_max_entries", "_pools")

    def __init__(self, max_entries: int) -> None:
        self._max_entries: int = check_int("max_entries", max_entries, minimum=0)  # type: ignore[assignment]
        self._pools: dict[Hashable, PoolExistenceBeliefs] = {}

    @property
    def max_entries(self) -> int:
        """The bound each pool gets."""
        return self._max_entries

    def pool(self, name: Hashable) -> PoolExistenceBeliefs:
        """Return the beliefs of pool ``name``, created empty on first use (P1).  O(1)."""
        beliefs = self._pools.get(check_pool(name, "pool name"))
        if beliefs is None:
            beliefs = self._pools[name] = PoolExistenceBeliefs(self._max_entries)
        return beliefs

    def clear(self) -> None:
        """``clear()`` on every pool: beliefs and in-flight references (P1, P5)."""
        for beliefs in self._pools.values():
            beliefs.clear()

    def clear_inflight(self) -> None:
        """``clear_inflight()`` on every pool (P1, P5)."""
        for beliefs in self._pools.values():
            beliefs.clear_inflight()

    def snapshot(self) -> dict[Hashable, PoolSnapshot]:
        """Each pool's snapshot by name (in order of first use)."""
        return {name: beliefs.snapshot() for name, beliefs in self._pools.items()}

    def check_invariants(self) -> None:
        """Assert every pool's invariants and the shared bound."""
        for beliefs in self._pools.values():
            assert beliefs.max_entries == self._max_entries, "pool with another bound"
            beliefs.check_invariants()
