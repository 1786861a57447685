"""A hard-TTL positive cache of keys known to exist (docs/SEMANTICS.md M1-M9, M6-lru).

The file backend asks "does this page file exist?" on every request; a live belief answers without touching
a (slow, shared) filesystem; a re-add never lengthens a life (M3).  Evicts by birth (M6) or, with
``eviction="lru"``, by recency (M6-lru); counters with ``stats=True`` (M8).

Complexity: ``contains``, ``remove`` O(1); ``add``, ``__len__`` O(1) amortized; ``clear`` O(n); the
batches (M9) O(keys in the batch).  Thread model: every public method takes one lock and reads the clock
at most once, inside it, so the calls are linearizable (M7); a batch (``add_many``, ``contains_many``,
``remove_many``, ``contains_prefix``) is one call.  Invariants: docs/ARCHITECTURE.md, "Design notes".

The class is not CrossHair-checked (its state sits behind a lock, in per-instance closures and an
injected clock); the lock-step machine (``spec/machines/metadata_cache.py``) and the model checker
(``spec.modelcheck``) check it step by step against ``spec/models/metadata_cache.py``, whose pure functions
CrossHair does check.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple, TypeVar, cast

from hicache._validate import check_int, check_ttl, shown

__all__ = ["EVICTIONS", "MetadataCache", "MetadataCacheStats"]

EVICTIONS = ("birth", "lru")  # M6 (the default) and its declared variant M6-lru


_R = TypeVar("_R")


def _naming_bad_keys(
    batch: Callable[[MetadataCache, Iterable[Hashable]], _R],
) -> Callable[[MetadataCache, Iterable[Hashable]], _R]:
    """Wrap ``batch`` so that its ``TypeError`` names ``keys`` or ``key`` (M9, B1).

    A ``TypeError`` for ``keys`` that are not iterable, or for a key in them that is not hashable, becomes
    one naming ``keys`` or ``key`` (:func:`_refused_keys`); others pass.
    """

    @functools.wraps(batch)
    def named(cache: MetadataCache, keys: Iterable[Hashable]) -> _R:
        try:
            return batch(cache, keys)
        except TypeError as error:
            raise _refused_keys(error, keys) from None

    return named


class MetadataCacheStats(NamedTuple):
    """Counters of a MetadataCache built with ``stats=True`` (M8)."""

    hits: int
    misses: int
    expirations: int
    evictions: int


class MetadataCache:
    """Hard-TTL positive cache: a key is believed for ``ttl_seconds`` after it is added.

    ``ttl_seconds`` is -1 (never expires) or a finite real number >= 0 (an int,
    float, ``Fraction`` or ``Decimal``, kept as the nearest float); the boundary
    is inclusive (alive at exactly ``birth + ttl``).  Re-adding a live key never
    extends its life.  ``max_entries`` bounds the entries; a full cache drops
    expired entries, then evicts in the ``eviction`` order: ``"birth"`` (the
    default, M6: the oldest birth) or ``"lru"`` (M6-lru: the least recently
    added or hit; a hit never lengthens a life).  ``clock`` returns monotonic
    seconds and is read at most once per call, a batch included.
    ``stats=True`` keeps the M8 counters (see :meth:`stats`).

    Raises ``TypeError``/``ValueError`` naming the parameter on bad input (B1).

    >>> now = [0.0]
    >>> cache = MetadataCache(5.0, clock=lambda: now[0])
    >>> cache.add("page-1")
    >>> cache.contains("page-1")
    True
    >>> now[0] = 5.0; cache.contains("page-1")   # inclusive boundary
    True
    >>> now[0] = 5.5; cache.contains("page-1")
    False
    >>> cache.add_many(["p1", "p2", "p3"]); cache.remove_many(["p2"])
    >>> cache.contains_many(["p1", "p2", "p3"]), cache.contains_prefix(["p1", "p3", "p2", "p1"])
    ([True, False, True], 2)
    """

    # ``contains`` answers with a closure built per instance at construction (over the
    # dict, lock, clock, TTL and counters), so the hot path has no attribute lookup
    # of its own (see benchmarks/bench_metadata_cache.py).

    def __init__(
        self,
        ttl_seconds: float | Fraction | Decimal,
        *,
        max_entries: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        stats: bool = False,
        eviction: str = "birth",
    ) -> None:
        self._ttl: float = check_ttl("ttl_seconds", ttl_seconds)
        self._max_entries = check_int("max_entries", max_entries, minimum=1, allow_none=True)
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__} {clock!r}")
        if not isinstance(stats, bool):
            raise TypeError(f"stats must be a bool, got {type(stats).__name__} {stats!r}")
        if not isinstance(eviction, str):
            raise TypeError(
                f"eviction must be a str, 'birth' or 'lru', got {type(eviction).__name__} {shown(eviction)}"
            )
        if eviction not in EVICTIONS:
            raise ValueError(f"eviction must be 'birth' or 'lru', got {shown(eviction)}")
        self._clock = clock
        self._counting = stats
        self._eviction = eviction
        # Births in birth order.  Reclaiming (a TTL) and the bound pop its oldest end, which an OrderedDict
        # does in O(1); with neither, nothing is ever popped from that end, and a plain dict keeps the same
        # order (insertion; a restarted key is re-inserted) for a third of the time and memory per key
        # (a store's beliefs born at start-up, F8).  Typed as the OrderedDict it is where that end is popped.
        self._births: OrderedDict[Hashable, float] = (
            cast("OrderedDict[Hashable, float]", {})
            if self._ttl < 0 and self._max_entries is None
            else OrderedDict()
        )
        # M6-lru: the same keys and births, least recently used first (None under "birth").
        self._recency: OrderedDict[Hashable, float] | None = OrderedDict() if eviction == "lru" else None
        self._lock = threading.Lock()
        self._answers = [0, 0]  # M8: misses, hits (indexed by the answer), shared with _contains
        self._expirations = self._evictions = 0
        self._contains = self._specialized_contains()
        if type(self).contains is MetadataCache.contains:  # a subclass's own contains stays in charge
            # The closure itself answers, with no method call in between: ~20% of contains' time.
            self.contains = self._contains  # type: ignore[method-assign,assignment]

    @property
    def ttl_seconds(self) -> float:
        """The lifetime of a belief in seconds (-1: never expires)."""
        return self._ttl

    @property
    def max_entries(self) -> int | None:
        """The bound on stored entries, or None."""
        return self._max_entries

    @property
    def eviction(self) -> str:
        """The order a full cache evicts live entries in: ``"birth"`` (M6) or ``"lru"`` (M6-lru)."""
        return self._eviction

    def contains(self, key: Hashable) -> bool:
        """Tell whether ``key`` is alive (M4); under ``"lru"`` a hit makes it the most recent.  O(1).

        (The one body is the closure ``_specialized_contains`` builds for this instance's mode; unless a
        subclass overrides this method, the instance calls that closure directly.)
        """
        return self._contains(key)

    def __contains__(self, key: Hashable) -> bool:
        """Answer ``key in cache`` as :meth:`contains` (M4)."""
        return self.contains(key)

    def add(self, key: Hashable) -> None:
        """Believe ``key`` for a new lifetime unless it is alive already (M3, M6).  O(1) amortized."""
        try:
            with self._lock:
                now = self._clock()
                self._reclaim(now)
                self._insert(key, now)
        except TypeError as error:
            raise _refused_key(error, key) from None

    def remove(self, key: Hashable) -> None:
        """Forget ``key``; no error when it is absent (M5).  O(1)."""
        try:
            hash(key)  # B1: a plain dict's pop of an unhashable key answers the default when it is empty
            with self._lock:
                self._births.pop(key, None)
                if self._recency is not None:
                    self._recency.pop(key, None)
        except TypeError as error:
            raise _refused_key(error, key) from None

    # -- batches (M9): one lock acquisition and one clock reading per call ------
    #
    # ``keys`` is iterated once, inside the lock: pass a list, a tuple or an iterator that does not
    # call back into this cache (the lock is not reentrant).  A ``keys`` that is not iterable, or a key
    # in it that is not hashable, is a TypeError naming it (B1); the keys before a bad one may have
    # taken effect (M9: the batch is not checked up front).

    @_naming_bad_keys
    def add_many(self, keys: Iterable[Hashable]) -> None:
        """M9: ``add`` of each key in order, all at one instant.  O(keys) amortized.

        Into an empty cache with no bound (a store's beliefs born at start-up, F8) the keys go in with one
        C-level ``update``: each key's first place, every birth ``now``, as the adds one by one give.
        """
        with self._lock:
            keys = iter(keys)
            for first in keys:  # an empty batch reads no clock and reclaims nothing, as no add would
                now = self._clock()
                self._reclaim(now)  # once: at one instant, nothing more expires between the adds
                births = self._births
                if not births and self._max_entries is None:
                    births[first] = now
                    births.update(zip(keys, itertools.repeat(now)))
                    if self._recency is not None:
                        self._recency.update(births)
                    return
                insert = self._insert
                insert(first, now)
                for key in keys:
                    insert(key, now)

    @_naming_bad_keys
    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        """M9: ``contains`` of each key in order, all at one instant (hits touched in order under lru)."""
        with self._lock:
            recency, ttl = self._recency, self._ttl
            if recency is None:
                if ttl < 0:
                    found = list(map(self._births.__contains__, keys))
                else:
                    now, get = self._clock(), self._births.get
                    found = [b is not None and now - b <= ttl for b in map(get, keys)]
            else:
                now = self._clock() if ttl >= 0 else 0.0
                get, touch = recency.get, recency.move_to_end
                found = []
                append = found.append
                for key in keys:
                    birth = get(key)
                    hit = birth is not None and (ttl < 0 or now - birth <= ttl)
                    if hit:
                        touch(key)
                    append(hit)
            if self._counting:
                hits = sum(found)
                self._answers[True] += hits
                self._answers[False] += len(found) - hits
            return found

    @_naming_bad_keys
    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        """M9: how many leading keys are alive, asked in order at one instant up to the first that is not.

        The same as ``contains`` of each key until the first ``False`` (the keys after it are not
        asked about, and an iterator is consumed up to and including that key).  O(keys asked).
        """
        with self._lock:
            ttl = self._ttl
            now = self._clock() if ttl >= 0 else 0.0
            recency = self._recency
            get = (self._births if recency is None else recency).get
            count = 0
            missed = False
            for key in keys:
                birth = get(key)
                if birth is None or not (ttl < 0 or now - birth <= ttl):
                    missed = True
                    break
                if recency is not None:
                    recency.move_to_end(key)
                count += 1
            if self._counting:
                self._answers[True] += count
                self._answers[False] += missed
            return count

    @_naming_bad_keys
    def remove_many(self, keys: Iterable[Hashable]) -> None:
        """M9: ``remove`` of each key, as one atomic call.  O(keys)."""
        with self._lock:
            pop, recency = self._births.pop, self._recency
            for key in keys:
                hash(key)  # B1, as in remove
                pop(key, None)
                if recency is not None:
                    recency.pop(key, None)

    def clear(self) -> None:
        """Forget every key (M5).  O(n)."""
        with self._lock:
            self._births.clear()
            if self._recency is not None:
                self._recency.clear()

    def __len__(self) -> int:
        """Return the number of live keys (M5).  O(1) amortized."""
        with self._lock:
            self._reclaim(self._clock())
            return len(self._births)

    def stats(self) -> MetadataCacheStats:
        """Return the M8 counters; all zero unless the cache was built with ``stats=True``."""
        with self._lock:
            misses, hits = self._answers
            return MetadataCacheStats(hits, misses, self._expirations, self._evictions)

    def snapshot(self) -> tuple[tuple[Hashable, float], ...]:
        """Return the live keys with their births in eviction order (read-only introspection).  O(n).

        Eviction order is the oldest birth first (``"birth"``), or the least recently used first
        (``"lru"``).  The model checker maps this onto the spec's state (a refinement mapping).
        Entries that expired but were not purged yet are left out (M4).
        """
        with self._lock:
            now, ttl = self._clock(), self._ttl
            order = self._births if self._recency is None else self._recency
            return tuple((k, b) for k, b in order.items() if ttl < 0 or now - b <= ttl)

    def check_invariants(self) -> None:
        """Assert the internal invariants (O(n): for tests, not for production)."""
        with self._lock:
            births = list(self._births.values())
            # Births in order also make the expired entries a prefix (ages never increase along the
            # order), so that needs no assertion of its own: one could never fail (make mutation showed it).
            assert all(a <= b for a, b in itertools.pairwise(births)), "births out of order"
            if self._max_entries is not None:
                assert len(births) <= self._max_entries, "bound exceeded"
            if self._recency is not None:
                assert self._recency == dict(self._births), "recency and births disagree"

    # -- internals -----------------------------------------------------------

    def _specialized_contains(self) -> Callable[[Hashable], bool]:
        """Build ``contains`` with every attribute lookup hoisted into closure cells, one per mode.

        The modes: counting (M8, any eviction order), or not counting under ``"lru"``/``"birth"``, with a
        TTL or without.
        """
        lock, clock, ttl, recency = self._lock, self._clock, self._ttl, self._recency
        if self._counting:
            answers = self._answers
            get = (self._births if recency is None else recency).get

            def contains_counted(key: Hashable) -> bool:
                try:
                    with lock:
                        birth = get(key)
                        found = birth is not None and (ttl < 0 or clock() - birth <= ttl)
                        if found and recency is not None:
                            recency.move_to_end(key)
                        answers[found] += 1
                        return found
                except TypeError as error:  # B1: a key that is not hashable is named
                    raise _refused_key(error, key) from None

            return contains_counted

        if recency is not None:
            get, touch = recency.get, recency.move_to_end
            if ttl < 0:

                def contains_recent_forever(key: Hashable) -> bool:
                    try:
                        with lock:
                            if get(key) is None:
                                return False
                            touch(key)
                            return True
                    except TypeError as error:  # B1: a key that is not hashable is named
                        raise _refused_key(error, key) from None

                return contains_recent_forever

            def contains_recent(key: Hashable) -> bool:
                try:
                    with lock:
                        birth = get(key)
                        if birth is not None and clock() - birth <= ttl:
                            touch(key)  # most recent for eviction; the birth (the lifetime) stays
                            return True
                        return False
                except TypeError as error:  # B1: a key that is not hashable is named
                    raise _refused_key(error, key) from None

            return contains_recent

        get = self._births.get
        if ttl < 0:

            def contains_forever(key: Hashable) -> bool:
                try:
                    with lock:
                        return get(key) is not None
                except TypeError as error:  # B1: a key that is not hashable is named
                    raise _refused_key(error, key) from None

            return contains_forever

        never = -math.inf  # the birth of an absent key: infinitely old, so never alive

        def contains(key: Hashable) -> bool:
            # The hot path (M4): one lookup, one clock reading, one comparison, no branch on absence.
            try:
                with lock:
                    return clock() - get(key, never) <= ttl
            except TypeError as error:  # B1: a key that is not hashable is named
                raise _refused_key(error, key) from None

        return contains

    def _insert(self, key: Hashable, now: float) -> None:
        """``add`` after reclaiming at ``now`` (lock held): a new lifetime unless alive; evict if full."""
        births = self._births
        if key in births:
            return  # alive, since every expired entry was just reclaimed: hard TTL
        bound, recency = self._max_entries, self._recency
        if bound is not None and len(births) >= bound:
            if recency is None:
                births.popitem(last=False)  # oldest birth: it would expire first
            else:
                del births[recency.popitem(last=False)[0]]  # the least recently used
            if self._counting:
                self._evictions += 1
        births[key] = now
        if recency is not None:
            recency[key] = now

    def _reclaim(self, now: float) -> None:
        """Pop the expired prefix: amortized O(1) because each entry is popped once (M6)."""
        ttl = self._ttl
        if ttl < 0:
            return
        births, recency = self._births, self._recency
        while births:
            oldest = next(iter(births.values()))
            if now - oldest <= ttl:
                return
            key, _ = births.popitem(last=False)
            if recency is not None:
                del recency[key]
            if self._counting:
                self._expirations += 1


def _refused_key(error: TypeError, key: object) -> TypeError:
    """Return the TypeError naming ``key`` when ``key`` is not hashable, else ``error`` itself (B1).

    The lookup's ``error`` was about ``key`` in the first case; else it was raised by something else (a
    clock that answers no number, say).
    """
    try:
        hash(key)
    except TypeError:
        return TypeError(f"key must be hashable, got {type(key).__name__} {shown(key)}")
    return error


def _refused_keys(error: TypeError, keys: object) -> TypeError:
    """Return the TypeError of a batch naming ``keys`` or ``key``, else ``error`` itself (B1, M9).

    It names ``keys`` when it is not iterable, or ``key`` for a key in it that is not hashable (found in a
    list or tuple; an iterator already consumed is described by ``error``).
    """
    if not isinstance(keys, Iterable):
        return TypeError(f"keys must be an iterable of keys, got {type(keys).__name__} {shown(keys)}")
    if isinstance(keys, (list, tuple)):
        for key in keys:
            refused = _refused_key(error, key)
            if refused is not error:
                return refused
    if str(error).startswith("unhashable type"):
        return TypeError(f"key must be hashable (a key of keys): {error}")
    return error
