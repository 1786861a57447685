"""A bounded LRU of beliefs that pages were written to storage (docs/SEMANTICS.md E1-E8).

In buffer mode the engine asks, for every prefetch decision and every write-through admission, "is this
chain of pages already in storage?"; a belief lets it skip a redundant device-to-host copy and write.
The cache is advisory (a stale positive costs one recompute, a miss one idempotent write), but exact about
its own LRU rule (one global LRU, E2; ``contains_all`` touches pages up to the first miss, E4), so that
tensor-parallel replicas making the same calls hold the same state.

Complexity: ``contains`` and ``__len__`` O(1); ``contains_all``, ``covers_all``, ``add``,
``invalidate_beyond`` O(pages), plus O(1) per evicted belief; ``clear``, ``snapshot`` O(n).
Thread model: not thread-safe by design: one caller thread at deterministic points.  Invariants and why
the walks are fast: docs/ARCHITECTURE.md, "Design notes".
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Hashable, Iterable, Sequence
from itertools import repeat
from typing import Any

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

__all__ = ["StorageExistenceCache"]

_TAG: Any = object()  # marks the keys of non-primary pools; private, so no page hash can equal them
_UNSET: Any = object()  # no primary pool yet


def check_cover(extra_cover: Any) -> Collection[Hashable]:
    """``extra_cover`` if it is a collection (a set, normally) of page hashes (E5)."""
    if (
        type(extra_cover) is not frozenset
        and type(extra_cover) is not set
        and not isinstance(extra_cover, Collection)
    ):
        raise TypeError(
            f"extra_cover must be a set of page hashes, got {type(extra_cover).__name__} {extra_cover!r}"
        )
    return extra_cover


class StorageExistenceCache:
    """Bounded LRU of ``(pool, page_hash)`` beliefs, one global bound (E1-E8).

    ``max_entries`` is an int >= 0 (0 remembers nothing).  Not thread-safe:
    call it from one thread.  Raises ``TypeError``/``ValueError`` naming the
    parameter on bad input, before any state changes (B1).

    >>> cache = StorageExistenceCache(max_entries=3)
    >>> cache.add("kv", ["a", "b", "c"])
    >>> cache.contains_all("kv", ["a", "b"])       # touches a, then b
    True
    >>> cache.add("kv", ["d"])                     # evicts the least recent: c
    >>> cache.snapshot()
    [('kv', 'a'), ('kv', 'b'), ('kv', 'd')]
    >>> cache.covers_all("kv", ["a", "x", "d"], extra_cover={"x"})
    True
    """

    __slots__ = ("_beliefs", "_max_entries", "_primary")

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        self._max_entries: int = check_int("max_entries", max_entries, minimum=0)  # type: ignore[assignment]
        self._beliefs: OrderedDict[Hashable, None] = OrderedDict()
        self._primary: Hashable = _UNSET

    @property
    def max_entries(self) -> int:
        """The bound on beliefs over all pools."""
        return self._max_entries

    def _keys(self, pool: Hashable, chain: Iterable[Hashable]) -> Iterable[Hashable]:
        """Return the dict keys of ``chain``'s pages in ``pool`` (lazily, in C)."""
        if pool == self._primary:
            return chain
        return zip(repeat(_TAG), repeat(check_pool(pool)), chain)

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        """Make each page most recently used in order, then trim to the bound (E2).

        O(pages + evicted).  Raises ``TypeError`` if ``hashes`` is not iterable
        or ``pool`` is not hashable.
        """
        chain = as_chain("hashes", hashes)
        if self._primary is _UNSET:
            self._primary = check_pool(pool)
        keys = self._keys(pool, chain)
        believe(self._beliefs, keys if keys is chain else list(keys), self._max_entries)

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        """Return True if the page is believed, and then it becomes most recently used (E3).  O(1)."""
        key = page_hash if pool == self._primary else (_TAG, check_pool(pool), page_hash)
        beliefs = self._beliefs
        if key in beliefs:
            beliefs.move_to_end(key)
            return True
        return False

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        """Return True if every page is believed; touches pages in order up to the first miss (E4).

        O(pages).  An empty chain is ``True``.
        """
        chain = hashes if type(hashes) is list else as_chain("hashes", hashes)
        if pool != self._primary:
            chain = zip(repeat(_TAG), repeat(check_pool(pool)), chain)  # type: ignore[assignment]
        return touch_all(self._beliefs, chain)

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        """Like ``contains_all``, but a page in ``extra_cover`` counts without being touched (E5).

        O(pages).  ``extra_cover`` is a set (or any container) of page hashes.
        """
        check_cover(extra_cover)
        chain = as_chain("hashes", hashes)
        if not extra_cover:
            return self.contains_all(pool, chain)
        keys_of = None if pool == self._primary else lambda pages: self._keys(pool, pages)
        return touch_all_or_covered(self._beliefs, chain, extra_cover, keys_of)

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        """Drop the beliefs for ``hashes[keep_pages:]``; the first ``keep_pages`` are untouched (E6).

        O(len(hashes) - keep_pages).  Raises ``ValueError`` for a negative
        ``keep_pages`` (never a slice from the end), ``TypeError`` for a
        non-int ``keep_pages`` or a ``hashes`` that is not a sequence.
        """
        check_int("keep_pages", keep_pages, minimum=0)
        check_sequence("hashes", hashes)
        forget(self._beliefs, self._keys(pool, hashes[keep_pages:]))

    def clear(self) -> None:
        """Drop every belief (E7).  O(n)."""
        self._beliefs.clear()
        self._primary = _UNSET

    def __len__(self) -> int:
        """Return the number of beliefs over all pools (E7).  O(1)."""
        return len(self._beliefs)

    def snapshot(self) -> list[tuple[Hashable, Hashable]]:
        """Every belief as ``(pool, page_hash)``, least recently used first.  O(n)."""
        primary = self._primary
        return [
            (key[1], key[2]) if type(key) is tuple and len(key) == 3 and key[0] is _TAG else (primary, key)
            for key in self._beliefs
        ]

    def check_invariants(self) -> None:
        """Assert the internal invariants (O(n): for tests, not for production)."""
        beliefs = self._beliefs
        assert len(beliefs) <= self._max_entries, "bound exceeded"
        assert all(value is None for value in beliefs.values()), "values are not None"
        if self._primary is _UNSET:
            assert not beliefs, "beliefs without a primary pool"
        for key in beliefs:
            if type(key) is tuple and len(key) == 3 and key[0] is _TAG:
                assert key[1] != self._primary, "a primary-pool belief stored under a tagged key"
