"""A hard-TTL positive cache of keys known to exist (docs/SEMANTICS.md M1-M8).

What it is for: the file backend asks "does this page file exist?" on every
request; a live belief answers without touching a (slow, shared) filesystem.

Internal invariants (``check_invariants`` asserts them):

* ``_births`` maps key -> birth time, in birth order.  A key whose lifetime
  restarts (M3) is deleted and re-inserted, so the order stays the birth order.
  The clock is read inside the lock, so births are non-decreasing along it.
* With a finite TTL, birth order is expiry order: the expired entries are
  always a prefix of ``_births``.  Reclaiming pops that prefix, which costs
  O(1) amortized per entry (each entry is popped once), and never scans.
* With ``max_entries`` set, ``len(_births) <= max_entries``.

Complexity: ``contains`` O(1); ``add`` O(1) amortized; ``remove`` O(1);
``__len__`` O(1) amortized; ``clear`` O(n).

Thread model: every public method takes one lock and reads the clock once,
inside it, so each call is atomic and the calls are linearizable (M7).

The class is not CrossHair-checked, because its state sits behind a lock, in
per-instance closures and an injected clock, which CrossHair cannot explore
symbolically; instead the lock-step machine (``spec/machines/metadata_cache.py``)
and the bounded model checker (``spec.modelcheck``) check it, step by step,
against ``spec/metadata_cache.py``, whose pure functions CrossHair does check.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

from hicache._validate import check_int, check_ttl

__all__ = ["MetadataCache", "MetadataCacheStats"]


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
    extends its life.  ``max_entries`` bounds the entries, evicting the oldest
    birth.  ``clock`` returns monotonic seconds and is read once per call.
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
    """

    # No __slots__: ``contains`` is specialized per instance at construction (a
    # closure over the dict, lock, clock and TTL) and stored in the instance
    # dict, where it shadows the documented method below.  That removes every
    # attribute lookup from the hot path (see benchmarks/bench_metadata_cache.py).

    def __init__(
        self,
        ttl_seconds: float | Fraction | Decimal,
        *,
        max_entries: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        stats: bool = False,
    ) -> None:
        self._ttl: float = check_ttl("ttl_seconds", ttl_seconds)
        self._max_entries = check_int("max_entries", max_entries, minimum=1, allow_none=True)
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__} {clock!r}")
        if not isinstance(stats, bool):
            raise TypeError(f"stats must be a bool, got {type(stats).__name__} {stats!r}")
        self._clock = clock
        self._counting = stats
        self._births: OrderedDict[Hashable, float] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = self._expirations = self._evictions = 0
        if not stats and type(self).contains is MetadataCache.contains:  # a subclass's override wins
            self.contains = self._specialized_contains()  # type: ignore[method-assign,assignment]

    @property
    def ttl_seconds(self) -> float:
        """The lifetime of a belief in seconds (-1: never expires)."""
        return self._ttl

    @property
    def max_entries(self) -> int | None:
        """The bound on stored entries, or None."""
        return self._max_entries

    @property
    def stats_enabled(self) -> bool:
        """Whether the M8 counters are kept (``stats=True`` at construction)."""
        return self._counting

    def contains(self, key: Hashable) -> bool:
        """True exactly when ``key`` is alive (M4).  O(1).

        (Replaced per instance by an equivalent specialized closure, unless counting or overridden.)
        """
        with self._lock:
            birth = self._births.get(key)
            found = birth is not None and (self._ttl < 0 or self._clock() - birth <= self._ttl)
            if self._counting:
                self._count(found)
            return found

    def __contains__(self, key: Hashable) -> bool:
        return self.contains(key)

    def add(self, key: Hashable) -> None:
        """Believe ``key`` for a new lifetime unless it is alive already (M3, M6).  O(1) amortized."""
        with self._lock:
            now = self._clock()
            births = self._births
            self._reclaim(now)
            if key in births:
                return  # alive, since every expired entry was just reclaimed: hard TTL
            bound = self._max_entries
            if bound is not None and len(births) >= bound:
                births.popitem(last=False)  # oldest birth: it would expire first
                if self._counting:
                    self._evictions += 1
            births[key] = now

    def remove(self, key: Hashable) -> None:
        """Forget ``key``; no error when it is absent (M5).  O(1)."""
        with self._lock:
            self._births.pop(key, None)

    def clear(self) -> None:
        """Forget every key (M5).  O(n)."""
        with self._lock:
            self._births.clear()

    def __len__(self) -> int:
        """The number of live keys (M5).  O(1) amortized."""
        with self._lock:
            self._reclaim(self._clock())
            return len(self._births)

    def stats(self) -> MetadataCacheStats:
        """The M8 counters; all zero unless the cache was built with ``stats=True``."""
        with self._lock:
            return MetadataCacheStats(self._hits, self._misses, self._expirations, self._evictions)

    def snapshot(self, *, expired: bool = False) -> tuple[tuple[Hashable, float], ...]:
        """The live keys with their births, oldest first (read-only introspection).  O(n).

        The model checker maps this onto the spec's state (a refinement mapping).
        Entries that expired but were not purged yet are left out (M4), unless
        ``expired=True`` (then every stored entry is listed, for state fingerprints).
        """
        with self._lock:
            now, ttl = self._clock(), self._ttl
            return tuple((k, b) for k, b in self._births.items() if expired or ttl < 0 or now - b <= ttl)

    def check_invariants(self) -> None:
        """Assert the internal invariants (O(n): for tests, not for production)."""
        with self._lock:
            births = list(self._births.values())
            # Births in order also make the expired entries a prefix (ages never increase along the
            # order), so that needs no assertion of its own: one could never fail (make mutation showed it).
            assert all(a <= b for a, b in itertools.pairwise(births)), "births out of order"
            if self._max_entries is not None:
                assert len(births) <= self._max_entries, "bound exceeded"

    # -- internals -----------------------------------------------------------

    def _specialized_contains(self) -> Callable[[Hashable], bool]:
        """``contains`` with every attribute lookup hoisted into closure cells."""
        lock, get, clock, ttl = self._lock, self._births.get, self._clock, self._ttl
        if ttl < 0:

            def contains_forever(key: Hashable) -> bool:
                with lock:
                    return get(key) is not None

            return contains_forever

        def contains(key: Hashable) -> bool:
            with lock:
                birth = get(key)
                return birth is not None and clock() - birth <= ttl

        return contains

    def _count(self, found: bool) -> bool:
        if found:
            self._hits += 1
        else:
            self._misses += 1
        return found

    def _reclaim(self, now: float) -> None:
        """Pop the expired prefix: amortized O(1) because each entry is popped once (M6)."""
        ttl = self._ttl
        if ttl < 0:
            return
        births = self._births
        while births:
            oldest = next(iter(births.values()))
            if now - oldest <= ttl:
                return
            births.popitem(last=False)
            if self._counting:
                self._expirations += 1
