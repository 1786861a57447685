"""MetadataCache variants (M2-M9).

* ``WRONG``: ``TextbookHardTTL`` (correct: an OrderedDict of births in birth order, the expired
  prefix purged before an add and a len) and the other correct classes here, each with one
  method overridden by a mistake somebody optimizing it could plausibly make: oracle targets.
* ``WRONG_PRODUCTION``: ``hicache.MetadataCache`` with one mistake each, which the model checker
  finds at a known depth (tests/modelcheck/test_explorer.py), as it does the caches of
  ``forgets_the_nth_live_key(n)``, whose mistake needs exactly ``n`` operations to show.
* ``CORRECT``: what the oracle must pass.
* ``RACES``: production with a race window (a :func:`spec.world.clock.meeting_point`), which only threads
  show: ``RacyMetadataCache`` (its ``add`` checks liveness and acts in two critical sections, so a key
  another thread added meanwhile gets its lifetime restarted, M3, and moved to the newest end, M6) and
  ``TornBatchMetadataCache`` (its batches are the single calls in turn, so another thread's call can
  land inside a batch, M9).  ``SCHEDULED``: their controls, the same point before production's atomic
  call.  In the linearizability checker's real-thread batches the leader of each meeting holds at
  the point while the other threads make their calls, so the window is open by construction.
* ``CONCURRENT``: production with a lock dropped or narrowed, correct one call at a time, whose race
  window is a read of the clock, as a third party's class would have it (no meeting point): the
  oracle's ``--threads`` holds threads there (O6).  ``CONCURRENT_CORRECT``: production, a lock-free
  read and a striped lock, which ``--threads`` must pass.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from typing import Any, NamedTuple

from hicache.metadata_cache import MetadataCache

from ..models.metadata_cache import refuse_bad_key, refuse_bad_keys, refuse_bad_settings
from ..world.clock import meeting_point

__all__ = [
    "CONCURRENT",
    "CONCURRENT_CORRECT",
    "CORRECT",
    "RACES",
    "SCHEDULED",
    "WRONG",
    "WRONG_PRODUCTION",
    "BatchReadsTheClockPerKey",
    "BoundOffByOne",
    "BoundaryExclusive",
    "Counters",
    "CountingTextbook",
    "EvictNewest",
    "EvictionCountsExpired",
    "EvictsTheNewest",
    "ExclusiveBoundary",
    "HitOnExpiredEntry",
    "KeepsStaleBirth",
    "LazyPurgeStaleBirth",
    "LenCountsExpired",
    "LenPurgesStaleBirth",
    "LockFreeRead",
    "LockFreeReadLazyPurge",
    "MetadataCacheLRU",
    "MonotonicBoundaryExclusive",
    "MonotonicHardTTL",
    "NanTtlAccepted",
    "OppositeLockOrder",
    "PlainHardTTLSet",
    "PrefixCountsPastTheMiss",
    "RacyMetadataCache",
    "ReAddKeepsPosition",
    "RefreshOnReAdd",
    "RemoveIgnoresUnhashableKeys",
    "ScheduledBatchMetadataCache",
    "ScheduledMetadataCache",
    "StaleBirthOnReAdd",
    "StripedMetadataCache",
    "TextbookBatches",
    "TextbookHardTTL",
    "TornBatchMetadataCache",
    "TornContainsMany",
    "UnhashableKeyIsAValueError",
    "UnlockedCheckThenAdd",
    "UnlockedLen",
    "ZeroTtlNeverExpires",
    "forgets_the_nth_live_key",
]


class TextbookHardTTL:
    """Correct: births in an OrderedDict, the expired prefix purged lazily (M2-M6)."""

    def __init__(
        self,
        ttl_seconds: float,
        *,
        max_entries: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        refuse_bad_settings(ttl_seconds, max_entries, clock)  # B1 (M1)
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self.clock = clock
        self.births: OrderedDict[Hashable, float] = OrderedDict()

    def live(self, birth: float, now: float) -> bool:
        return self.ttl == -1 or now - birth <= self.ttl

    def purge(self, now: float) -> None:
        while self.births:
            key, birth = next(iter(self.births.items()))
            if self.live(birth, now):
                return
            del self.births[key]

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        self.add_at(key, self.clock())

    def add_at(self, key: Hashable, now: float) -> None:
        """``add`` at the instant ``now`` (a batch adds every key at its one reading)."""
        self.purge(now)
        if key in self.births:
            return
        if self.max_entries is not None and len(self.births) >= self.max_entries:
            self.evict()
        self.births[key] = now

    def evict(self) -> None:
        self.births.popitem(last=False)

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        birth = self.births.get(key)
        return birth is not None and self.live(birth, self.clock())

    def remove(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        self.births.pop(key, None)

    def clear(self) -> None:
        self.births.clear()

    def __len__(self) -> int:
        self.purge(self.clock())
        return len(self.births)


class Counters(NamedTuple):
    hits: int
    misses: int
    expirations: int
    evictions: int


class CountingTextbook(TextbookHardTTL):
    """Correct: the textbook cache with the M8 counters."""

    hits = misses = evictions = 0  # each instance's own from its first count

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        found = super().contains(key)
        if found:
            self.hits += 1
        else:
            self.misses += 1
        return found

    def evict(self) -> None:
        super().evict()
        self.evictions += 1

    def stats(self) -> Counters:
        return Counters(self.hits, self.misses, 0, self.evictions)


class PlainHardTTLSet:
    """Correct: the benchmark's plain lock + dict set, with hard-TTL re-add (add and contains only)."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        refuse_bad_settings(ttl, clock=clock)  # B1 (M1)
        self._births: dict[Hashable, float] = {}
        self._lock = threading.Lock()
        self._ttl = ttl
        self._clock = clock

    def _live(self, birth: float | None, now: float) -> bool:
        return birth is not None and (self._ttl == -1 or now - birth <= self._ttl)

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        with self._lock:
            now = self._clock()
            if not self._live(self._births.get(key), now):
                self._births[key] = now

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        with self._lock:
            return self._live(self._births.get(key), self._clock())


class MonotonicHardTTL(PlainHardTTLSet):
    """Correct: reads ``time.monotonic()`` itself (no clock parameter): the oracle patches its module."""

    def __init__(self, ttl: float) -> None:
        super().__init__(ttl, clock=lambda: time.monotonic())


# -- wrong variants ------------------------------------------------------------


class BoundaryExclusive(TextbookHardTTL):
    """M2: ``<`` for ``<=``: a belief dies at exactly birth + ttl instead of just after."""

    def live(self, birth: float, now: float) -> bool:
        return self.ttl == -1 or now - birth < self.ttl


class ZeroTtlNeverExpires(TextbookHardTTL):
    """M2: a truthiness shortcut (``if not ttl``) makes TTL 0 mean "never expires", like -1."""

    def live(self, birth: float, now: float) -> bool:
        return not self.ttl or self.ttl == -1 or now - birth <= self.ttl


class RefreshOnReAdd(TextbookHardTTL):
    """M3: re-adding a live key restarts its lifetime (a sliding TTL, as in the benchmark's plain set)."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        self.births.pop(key, None)
        super().add(key)


class StaleBirthOnReAdd(TextbookHardTTL):
    """M3: the add fast path tests ``key in births`` without purging: an expired entry keeps its old birth."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        if key in self.births:
            return
        super().add(key)


class LazyPurgeStaleBirth(TextbookHardTTL):
    """M3: the engine's shape: ``contains`` purges an expired entry it meets, and ``add`` returns early
    on ``key in births`` without asking whether the entry is live, so a re-add after the TTL keeps the
    old birth and the fresh fact reads as expired.  Only a ``contains`` between the expiry and the
    re-add repairs it: an oracle that probes between steps never sees the mistake (O1)."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        if key in self.births:
            return
        if self.max_entries is not None and len(self.births) >= self.max_entries:
            self.purge(self.clock())
            if len(self.births) >= self.max_entries:
                self.evict()
        self.births[key] = self.clock()

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        birth = self.births.get(key)
        if birth is None:
            return False
        if not self.live(birth, self.clock()):
            del self.births[key]
            return False
        return True


class LenPurgesStaleBirth(LazyPurgeStaleBirth):
    """M3: the stale birth of ``LazyPurgeStaleBirth``, with ``__len__`` purging every expired entry:
    an oracle that asks ``len()`` after every step repairs the mistake before the re-add (O1)."""

    def __len__(self) -> int:
        now = self.clock()
        for key in [k for k, b in self.births.items() if not self.live(b, now)]:
            del self.births[key]
        return len(self.births)


class ReAddKeepsPosition(TextbookHardTTL):
    """M6: purge only when full, and re-add an expired key by rewriting its birth in place: the dict
    is no longer in birth order, so the bound evicts a fresh key instead of the oldest birth."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        now = self.clock()
        birth = self.births.get(key)
        if birth is not None and self.live(birth, now):
            return
        if birth is None and self.max_entries is not None and len(self.births) >= self.max_entries:
            self.purge(now)
            if len(self.births) >= self.max_entries:
                self.evict()
        self.births[key] = now

    def __len__(self) -> int:
        now = self.clock()
        return sum(self.live(birth, now) for birth in self.births.values())


class EvictNewest(TextbookHardTTL):
    """M6: ``popitem()`` without ``last=False``: the bound drops the newest birth."""

    def evict(self) -> None:
        self.births.popitem()


class BoundOffByOne(TextbookHardTTL):
    """M6: ``>`` for ``>=`` in the bound check: the cache holds max_entries + 1 keys."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        now = self.clock()
        self.purge(now)
        if key in self.births:
            return
        if self.max_entries is not None and len(self.births) > self.max_entries:
            self.evict()
        self.births[key] = now


class LenCountsExpired(TextbookHardTTL):
    """M5: ``__len__`` returns the stored entries, expired ones included (the purge skipped for speed)."""

    def __len__(self) -> int:
        return len(self.births)


class EvictionCountsExpired(CountingTextbook):
    """M8: the bound is applied before the purge, so an expired entry dropped by it counts as an eviction."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        now = self.clock()
        if key not in self.births or not self.live(self.births[key], now):
            self.births.pop(key, None)
            if self.max_entries is not None and len(self.births) >= self.max_entries:
                self.evict()
            self.births[key] = now
        self.purge(now)


class HitOnExpiredEntry(CountingTextbook):
    """M8: the hit counter is bumped on a stored key before the liveness test."""

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        birth = self.births.get(key)
        if birth is None:
            self.misses += 1
            return False
        self.hits += 1
        return self.live(birth, self.clock())


class MonotonicBoundaryExclusive(MonotonicHardTTL):
    """M2: reads ``time.monotonic()`` itself and dies at exactly birth + ttl (time patched by the oracle)."""

    def _live(self, birth: float | None, now: float) -> bool:
        return birth is not None and (self._ttl == -1 or now - birth < self._ttl)


class TextbookBatches(TextbookHardTTL):
    """Correct: the textbook cache with the M9 batches, each the single operations at one reading."""

    def add_many(self, keys: Iterable[Hashable]) -> None:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        keys = list(keys)
        if keys:
            now = self.clock()
            for key in keys:
                self.add_at(key, now)

    def contains_at(self, key: Hashable, now: float) -> bool:
        birth = self.births.get(key)
        return birth is not None and self.live(birth, now)

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        now = self.clock()
        return [self.contains_at(key, now) for key in keys]

    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        now, count = self.clock(), 0
        for key in keys:
            if not self.contains_at(key, now):
                break
            count += 1
        return count

    def remove_many(self, keys: Iterable[Hashable]) -> None:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        for key in keys:
            self.births.pop(key, None)


class BatchReadsTheClockPerKey(TextbookBatches):
    """M9: ``contains_many`` as a loop over ``contains``: one clock reading per key, so a batch is not
    one instant (a clock that moves between two keys answers for two instants)."""

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        return [self.contains(key) for key in keys]


class PrefixCountsPastTheMiss(TextbookBatches):
    """M9: ``contains_prefix`` counts every live key of the chain instead of stopping at the first
    that is not."""

    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        now = self.clock()
        return sum(self.contains_at(key, now) for key in keys)


class RemoveIgnoresUnhashableKeys(TextbookBatches):
    """B1: ``remove`` never raises ("removing an absent key is not an error", M5, read as any key): it
    swallows the ``TypeError`` of a key that is not hashable, so ``remove([])`` passes silently."""

    def remove(self, key: Hashable) -> None:
        with contextlib.suppress(TypeError):
            self.births.pop(key, None)


class UnhashableKeyIsAValueError(TextbookBatches):
    """B1: ``add`` refuses a key that is not hashable with a ``ValueError`` (a bad key taken for a bad
    value) where B1 says ``TypeError``."""

    def add(self, key: Hashable) -> None:
        try:
            hash(key)
        except TypeError:
            raise ValueError(f"key must be hashable, got {key!r}") from None
        super().add(key)


class NanTtlAccepted(TextbookBatches):
    """B1 (M1): the TTL is checked with comparisons, ``ttl < 0 and ttl != -1`` and ``ttl == inf``, which a
    NaN fails every one of: ``ttl_seconds=nan`` is taken, and every key then dies at once."""

    def __init__(self, ttl_seconds: float, **others: Any) -> None:
        if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, (int, float)):
            raise TypeError(f"ttl_seconds must be a number, got {ttl_seconds!r}")
        if (ttl_seconds < 0 and ttl_seconds != -1) or ttl_seconds == float("inf"):
            raise ValueError(f"ttl_seconds must be -1 or a finite number >= 0, got {ttl_seconds!r}")
        super().__init__(1.0, **others)  # the rest as it should be
        self.ttl = ttl_seconds


WRONG: dict[str, tuple[type, str]] = {
    "BoundaryExclusive": (BoundaryExclusive, "M2"),
    "ZeroTtlNeverExpires": (ZeroTtlNeverExpires, "M2"),
    "RefreshOnReAdd": (RefreshOnReAdd, "M3"),
    "StaleBirthOnReAdd": (StaleBirthOnReAdd, "M3"),
    "LazyPurgeStaleBirth": (LazyPurgeStaleBirth, "M3"),
    "LenPurgesStaleBirth": (LenPurgesStaleBirth, "M3"),
    "ReAddKeepsPosition": (ReAddKeepsPosition, "M6"),
    "EvictNewest": (EvictNewest, "M6"),
    "BoundOffByOne": (BoundOffByOne, "M6"),
    "LenCountsExpired": (LenCountsExpired, "M5"),
    "EvictionCountsExpired": (EvictionCountsExpired, "M8"),
    "HitOnExpiredEntry": (HitOnExpiredEntry, "M8"),
    "MonotonicBoundaryExclusive": (MonotonicBoundaryExclusive, "M2"),
    "BatchReadsTheClockPerKey": (BatchReadsTheClockPerKey, "M9"),
    "PrefixCountsPastTheMiss": (PrefixCountsPastTheMiss, "M9"),
    "RemoveIgnoresUnhashableKeys": (RemoveIgnoresUnhashableKeys, "B1"),
    "UnhashableKeyIsAValueError": (UnhashableKeyIsAValueError, "B1"),
    "NanTtlAccepted": (NanTtlAccepted, "B1"),
}

CORRECT: dict[str, type] = {
    "TextbookHardTTL": TextbookHardTTL,
    "CountingTextbook": CountingTextbook,
    "PlainHardTTLSet": PlainHardTTLSet,
    "MonotonicHardTTL": MonotonicHardTTL,
    "TextbookBatches": TextbookBatches,
}


# -- wrong variants of production ----------------------------------------------


def forgets_the_nth_live_key(n: int) -> Callable[..., Any]:
    """A factory of caches that silently drop a new key while exactly ``n - 1`` keys are live.

    The shortest sequence that shows it is ``n`` adds of distinct keys: ``n - 1``
    adds to get there (no shorter path holds ``n - 1`` live keys), one to trip.
    """

    class ForgetsTheNthLiveKey(MetadataCache):
        def add(self, key: Hashable) -> None:
            refuse_bad_key(key)  # B1
            if len(self) == n - 1 and key not in self.snapshot_keys():
                return
            super().add(key)

        def snapshot_keys(self) -> set[Hashable]:
            return {k for k, _ in self.snapshot()}

    def build(ttl: float, **kwargs: Any) -> MetadataCache:
        return ForgetsTheNthLiveKey(ttl, **kwargs)

    return build


class EvictsTheNewest(MetadataCache):
    """M6 broken: a full cache evicts its newest entry instead of its oldest (shortest: 3 ops at cap 2)."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        with self._lock:
            now = self._clock()
            self._reclaim(now)
            if key in self._births:
                return
            if self._max_entries is not None and len(self._births) >= self._max_entries:
                self._births.popitem(last=True)
                if self._counting:  # M8 kept: the one mistake is the victim
                    self._evictions += 1
            self._births[key] = now


class ExclusiveBoundary(MetadataCache):
    """M2 broken in ``contains`` only: dead at exactly birth + ttl (shortest: add, contains at TTL 0)."""

    def __init__(self, ttl: float, **kwargs: Any) -> None:
        super().__init__(ttl, **kwargs)
        self.contains = self._exclusive  # type: ignore[method-assign]

    def _exclusive(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        with self._lock:
            birth = self._births.get(key)
            found = birth is not None and (self._ttl < 0 or self._clock() - birth < self._ttl)
            if self._counting:  # M8 kept: the one mistake is the boundary
                self._answers[found] += 1
            return found


class KeepsStaleBirth(MetadataCache):
    """M3 broken: re-adding an expired, not yet purged key keeps its old birth (add, expire past, add)."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        with self._lock:
            if key in self._births:
                return
        super().add(key)


WRONG_PRODUCTION: dict[str, tuple[type[MetadataCache], str]] = {
    "EvictsTheNewest": (EvictsTheNewest, "M6"),
    "ExclusiveBoundary": (ExclusiveBoundary, "M2"),
    "KeepsStaleBirth": (KeepsStaleBirth, "M3"),
}


# -- races: production with a race window, for the linearizability checker (M7, M9) ----------


def _yield() -> None:
    meeting_point()  # the leader of a meeting holds here while the other threads make their calls
    time.sleep(0)  # releases the GIL: another thread may run at this point


class _Scheduled(MetadataCache):
    """A MetadataCache with a scheduling point, ``schedule_point`` (by default a meeting point, then a
    release of the GIL), that its subclass calls where it wants another thread's call to land."""

    def __init__(self, ttl: float, *, schedule_point: Callable[[], None] = _yield, **kwargs: Any) -> None:
        super().__init__(ttl, **kwargs)
        self._schedule_point = schedule_point


class RacyMetadataCache(_Scheduled):
    """DELIBERATELY WRONG (M7): ``add`` is check-then-act across two critical sections."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        with self._lock:
            self._reclaim(self._clock())
            known = key in self._births
        self._schedule_point()  # the race window: another thread may add `key` now
        if known:
            return
        with self._lock:
            births = self._births
            births.pop(key, None)  # acting on a stale check: restarts a lifetime that just began
            if self._max_entries is not None and len(births) >= self._max_entries:
                births.popitem(last=False)
                self._evictions += 1
            births[key] = self._clock()


class ScheduledMetadataCache(_Scheduled):
    """The control: the same scheduling point, placed before production's atomic ``add``."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        self._schedule_point()
        super().add(key)


class TornBatchMetadataCache(_Scheduled):
    """DELIBERATELY WRONG (M9, M7): each batch is the single calls in turn, a lock acquisition (and a
    clock reading) per key, with a scheduling point between two keys."""

    def _each(self, call: Callable[[Hashable], Any], keys: Iterable[Hashable]) -> list[Any]:
        answers = []
        for i, key in enumerate(keys):
            if i:
                self._schedule_point()  # the tear: another thread's call may land here
            answers.append(call(key))
        return answers

    def add_many(self, keys: Iterable[Hashable]) -> None:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        self._each(self.add, keys)

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        return self._each(self.contains, keys)

    def remove_many(self, keys: Iterable[Hashable]) -> None:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        self._each(self.remove, keys)

    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        found = self.contains_many(keys)
        return found.index(False) if False in found else len(found)


class ScheduledBatchMetadataCache(_Scheduled):
    """The control: the same scheduling point, placed before production's atomic ``contains_many``."""

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        self._schedule_point()
        return super().contains_many(keys)


RACES: dict[str, tuple[type[MetadataCache], str]] = {
    "RacyMetadataCache": (RacyMetadataCache, "M7"),
    "TornBatchMetadataCache": (TornBatchMetadataCache, "M9"),
}
SCHEDULED: dict[str, type[MetadataCache]] = {
    "ScheduledMetadataCache": ScheduledMetadataCache,
    "ScheduledBatchMetadataCache": ScheduledBatchMetadataCache,
}


# -- concurrent variants: what only real threads show, held at the oracle's clock (O6, M7, M9) ----------
#
# Production's locked ``MetadataCache`` with one method made faster by dropping or narrowing its lock.
# Each is correct one call at a time (the sequential oracle passes it); the scheduling point its race
# needs is a read of the clock, which the oracle's ``--threads`` mode holds (spec/oracle/_threads.py):
# no meeting point, nothing a third-party class would not do itself.


def _live(ttl: float, birth: float | None, now: float) -> bool:
    return birth is not None and (ttl < 0 or now - birth <= ttl)


class _Narrowed(MetadataCache):
    """Production with a lock dropped or narrowed: what an answer of ``contains`` does besides answering,
    as production does it, for the variants that answer outside production's ``contains``."""

    def _recent(self, key: Hashable, *, holding: bool = False) -> None:
        """A hit under ``eviction="lru"`` (M6-lru): ``key`` to the recent end, if it is still there (under
        the lock, taken unless ``holding`` it)."""
        recency = self._recency
        if recency is None:
            return
        with nullcontext() if holding else self._lock:
            if key in recency:
                recency.move_to_end(key)

    def _count(self, hits: int, misses: int) -> None:
        """M8 with ``stats=True``: the answers counted (under whatever lock the caller holds)."""
        if self._counting:
            self._answers[True] += hits
            self._answers[False] += misses


class UnlockedCheckThenAdd(MetadataCache):
    """M7: ``add`` checks in one critical section (is the key alive? is the cache full?), reads the clock
    again outside it, and acts in a second one on that stale check: two threads that both saw room both
    insert (three keys under a bound of 2, M6), and a key another thread added in between gets its
    lifetime restarted (M3) at the newest end."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        now = self._clock()
        with self._lock:
            self._reclaim(now)
            alive = key in self._births
            full = self._max_entries is not None and len(self._births) >= self._max_entries
        if alive:
            return
        now = self._clock()  # the race window (the same reading, one call at a time)
        with self._lock:  # acting on the stale check
            births, recency = self._births, self._recency
            if full and births:
                if recency is None:
                    births.popitem(last=False)
                else:
                    del births[recency.popitem(last=False)[0]]
                if self._counting:
                    self._evictions += 1
            births.pop(key, None)
            births[key] = now
            if recency is not None:
                recency.pop(key, None)
                recency[key] = now


class LockFreeReadLazyPurge(_Narrowed):
    """M7: ``contains`` reads the belief without the lock, then the clock, then purges what it read as
    expired by key: a belief another thread re-added between the read and the pop is the one popped,
    so a key that was just added answers False."""

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        birth = self._births.get(key)  # lock-free
        hit = birth is not None and _live(self._ttl, birth, self._clock())  # the clock: the race window
        if hit:
            self._recent(key)
        elif birth is not None:
            with self._lock:  # the lazy purge, by key: whatever belief is there now
                self._births.pop(key, None)
                if self._recency is not None:
                    self._recency.pop(key, None)
        self._count(hit, not hit)  # M8 unlocked: its race is not the one this variant is about
        return hit


class UnlockedLen(MetadataCache):
    """M7: ``len`` counts the live entries without the lock, reading the clock per entry: another
    thread's add or remove during the walk raises ``RuntimeError: OrderedDict mutated during
    iteration`` out of ``len``."""

    def __len__(self) -> int:
        ttl = self._ttl
        return sum(1 for birth in self._births.values() if ttl < 0 or self._clock() - birth <= ttl)


class TornContainsMany(_Narrowed):
    """M9 (M7): ``contains_many`` takes the lock once per key and reads the clock once, at the first key
    it finds: another thread's call lands between two keys, so the answers are those of no one instant
    (``[True, False]`` for two keys only ever added and cleared together)."""

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        now: float | None = None
        found = []
        for key in keys:
            with self._lock:
                birth = self._births.get(key)
            if birth is not None and now is None:
                now = self._clock()  # the one reading, between two keys: the tear
            hit = birth is not None and _live(self._ttl, birth, now if now is not None else 0.0)
            if hit:
                self._recent(key)
            found.append(hit)
        if self._counting:  # M8
            with self._lock:
                self._count(sum(found), len(found) - sum(found))
        return found


class OppositeLockOrder(_Narrowed):
    """M7: two locks, taken in opposite orders: ``add`` takes the entries' lock then the bound's,
    ``contains`` the bound's then the entries', each reading the clock while it holds the first.
    One thread in each, held at its clock, and neither ever returns (a deadlock)."""

    def __init__(self, ttl_seconds: float, **kwargs: Any) -> None:
        super().__init__(ttl_seconds, **kwargs)
        self._bound_lock = threading.Lock()

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        with self._lock:
            now = self._clock()
            with self._bound_lock:
                self._reclaim(now)
                self._insert(key, now)

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        with self._bound_lock:
            now = self._clock()
            with self._lock:
                hit = _live(self._ttl, self._births.get(key), now)
                if hit:
                    self._recent(key, holding=True)
                self._count(hit, not hit)
                return hit


class LockFreeRead(MetadataCache):
    """Correct: ``contains`` reads the clock, then the belief, without the lock, and purges nothing on
    the read path.  Linearizable: the answer is the belief's liveness at the instant it is read (a
    belief born after the clock reading is live at it too).  Under ``eviction="lru"`` a hit must move
    the key at that same instant, and the M8 counters (``stats=True``) must count it, so those take
    the lock."""

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        if self._recency is not None or self._counting:
            return super().contains(key)
        now = self._clock()
        return _live(self._ttl, self._births.get(key), now)


class StripedMetadataCache:
    """Correct: a striped lock.  Each key's stripe (its hash modulo ``stripes``) keeps its own births
    in birth order under its own lock; what only one key touches (``contains``, ``remove``, ``add`` of
    an unbounded cache) takes that stripe alone; what spans keys (``add`` at a bound, ``len``,
    ``clear``, the M9 batches) takes every stripe, in stripe order.  A full cache evicts the least
    (birth or last use, then a global sequence number) of the stripes' heads, so every clause holds."""

    def __init__(
        self,
        ttl_seconds: float,
        *,
        max_entries: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        eviction: str = "birth",
        stripes: int = 4,
    ) -> None:
        MetadataCache(ttl_seconds, max_entries=max_entries, clock=clock, eviction=eviction)  # M1: its checks
        self._ttl, self._bound, self._clock = float(ttl_seconds), max_entries, clock
        self._lru = eviction == "lru"
        self._locks = [threading.Lock() for _ in range(stripes)]
        # per stripe: key -> (birth, rank), in rank order; rank = (birth or last use, sequence number)
        self._stripes: list[OrderedDict[Hashable, tuple[float, tuple[float, int]]]] = [
            OrderedDict() for _ in range(stripes)
        ]
        self._sequence = iter(range(1 << 62))  # next() is atomic under the GIL

    def _index(self, key: Hashable) -> int:
        return hash(key) % len(self._locks)

    @contextmanager
    def _one(self, key: Hashable) -> Iterator[OrderedDict[Hashable, tuple[float, tuple[float, int]]]]:
        """``key``'s stripe, under its lock."""
        index = self._index(key)
        with self._locks[index]:
            yield self._stripes[index]

    @contextmanager
    def _all(self) -> Iterator[None]:
        """Every stripe's lock, taken in stripe order (one order for everybody: no deadlock)."""
        with ExitStack() as held:
            for lock in self._locks:
                held.enter_context(lock)
            yield

    def _reclaim(self, stripe: OrderedDict[Hashable, tuple[float, tuple[float, int]]], now: float) -> None:
        if self._ttl < 0:
            return
        for key in [k for k, (birth, _) in stripe.items() if now - birth > self._ttl]:
            del stripe[key]

    def _insert(self, key: Hashable, now: float, *, every_stripe: bool) -> None:
        stripe = self._stripes[self._index(key)]
        self._reclaim(stripe, now)
        if key in stripe:
            return
        if self._bound is not None:
            assert every_stripe
            for other in self._stripes:
                self._reclaim(other, now)
            if sum(map(len, self._stripes)) >= self._bound:
                heads = [(next(iter(s.values()))[1], s) for s in self._stripes if s]
                victim = min(heads, key=lambda head: head[0])[1]
                victim.popitem(last=False)
        stripe[key] = (now, (now, next(self._sequence)))

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        if self._bound is None:
            with self._one(key):
                self._insert(key, self._clock(), every_stripe=False)
            return
        with self._all():
            self._insert(key, self._clock(), every_stripe=True)

    def _contains_at(self, key: Hashable, now: float) -> bool:
        stripe = self._stripes[self._index(key)]
        entry = stripe.get(key)
        hit = entry is not None and _live(self._ttl, entry[0], now)
        if hit and self._lru:
            assert entry is not None
            stripe[key] = (entry[0], (now, next(self._sequence)))
            stripe.move_to_end(key)
        return hit

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1
        with self._one(key):
            return self._contains_at(key, self._clock())

    def remove(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1
        with self._one(key) as stripe:
            stripe.pop(key, None)

    def clear(self) -> None:
        with self._all():
            for stripe in self._stripes:
                stripe.clear()

    def __len__(self) -> int:
        with self._all():
            now = self._clock()
            for stripe in self._stripes:
                self._reclaim(stripe, now)
            return sum(map(len, self._stripes))

    def add_many(self, keys: Iterable[Hashable]) -> None:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        with self._all():
            keys = list(keys)
            if keys:
                now = self._clock()
                for key in keys:
                    self._insert(key, now, every_stripe=True)

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        with self._all():
            keys = list(keys)
            now = self._clock() if keys else 0.0
            return [self._contains_at(key, now) for key in keys]

    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        with self._all():
            now, count = self._clock(), 0
            for key in keys:
                if not self._contains_at(key, now):
                    break
                count += 1
            return count

    def remove_many(self, keys: Iterable[Hashable]) -> None:
        keys = refuse_bad_keys(keys)  # B1 (M9)
        with self._all():
            for key in keys:
                self._stripes[self._index(key)].pop(key, None)


# name -> (variant, the clause its mistake breaks): each FAILs under ``--threads`` and PASSes one call at
# a time; the oracle must name the clause (M7; M9 for a torn batch, which names M7 too).
CONCURRENT: dict[str, tuple[type, str]] = {
    "UnlockedCheckThenAdd": (UnlockedCheckThenAdd, "M7"),
    "LockFreeReadLazyPurge": (LockFreeReadLazyPurge, "M7"),
    "UnlockedLen": (UnlockedLen, "M7"),
    "TornContainsMany": (TornContainsMany, "M9"),
    "OppositeLockOrder": (OppositeLockOrder, "M7"),
}
# Optimized alternatives that must PASS under ``--threads`` (a false alarm fails a test).
CONCURRENT_CORRECT: dict[str, type] = {
    "MetadataCache": MetadataCache,
    "LockFreeRead": LockFreeRead,
    "StripedMetadataCache": StripedMetadataCache,
}


def MetadataCacheLRU(ttl_seconds: float, **kwargs: Any) -> MetadataCache:
    """Production with ``eviction="lru"`` (M6-lru), by a name the command line can give."""
    return MetadataCache(ttl_seconds, eviction="lru", **kwargs)
