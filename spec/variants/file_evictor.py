"""File evictor variants (V1-V6, S7, C3).

* ``WRONG_PRODUCTION``: ``hicache.file_evictor.LRUFileEvictor`` (which the oracle puts behind
  SEMANTICS V's factory) with one method overridden the way an optimizer plausibly might, or as
  the project itself once had it; the evictor's lock-step machine catches every one, and the
  store variants of ``spec.variants.file_store`` are built on some.
* ``WRONG``: :class:`OsEvictor` with one mistake each.  ``OsEvictor``, written from scratch in V's
  interface (``OsEvictor(directory, *, max_size, min_free_space, eviction_ratio, on_evict)``),
  calls ``os`` itself, as engines' evictors do: the oracle interposes its fake filesystem in this
  module (O4).  It is correct (where V leaves room: inert, it tracks nothing; ``commit`` makes the
  key the most recently used; ``clear`` keeps writes in flight; a victim that could not be removed
  rests until its entry changes, the machine's clock never reaching S7's back-off).  Its
  subclasses re-create the defects known in engines' evictors: eviction that stops at an
  unremovable victim (V5), ``on_evict`` after the unlink (V6), a vanished victim's bytes never
  given back (V5).
* ``CORRECT_BACKGROUND`` and ``WRONG_BACKGROUND``: :class:`BackgroundEvictor`, an ``OsEvictor`` that
  evicts as the engine's ``fast_file`` backend does, in the background between two watermarks (V3-bg),
  and its mistakes, checked with ``eviction=background`` declared (O3): a pass that never drains, one
  that drains only to the high watermark (V3-bg), one that takes a write in flight (V5).  Undeclared,
  ``BackgroundEvictor`` breaks V3 (the catalogue lists it so).
* ``CORRECT``: what the oracle must pass.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from hicache.file_evictor import LRUFileEvictor, _Entry

from ..models.file_evictor import refuse_bad_limits, refuse_bad_size

__all__ = [
    "CORRECT",
    "CORRECT_BACKGROUND",
    "WRONG",
    "WRONG_BACKGROUND",
    "WRONG_PRODUCTION",
    "BackgroundEvictor",
    "BackgroundLRUFileEvictor",
    "CallbackAfterUnlink",
    "CommitKeepsReservationOrder",
    "DiscardDropsWritesInFlight",
    "DrainsToTheHighWatermark",
    "NegativeSizeAdmitted",
    "NeverDrains",
    "OsEvictor",
    "PassEvictsWritesInFlight",
    "RatioIgnored",
    "RatioUnchecked",
    "RetriesUnremovableEvictor",
    "SizeIsAValueError",
    "StopsAtUnremovable",
    "TouchAdoptsWithoutSize",
    "VanishedNotRefunded",
]


class CommitKeepsReservationOrder(LRUFileEvictor):
    """V4: ``commit`` only clears the in-flight mark: recency counts from the reservation, so a write
    reserved first but published last is evicted before older files."""

    def commit(self, key: str, size: int | None = None) -> None:
        with self._lock:
            entry = self._entry(key)
            if entry is not None:
                entry.writers, entry.published = 0, False


class TouchAdoptsWithoutSize(LRUFileEvictor):
    """V4: ``touch`` adopts an untracked file without a ``stat`` (size 0 when unknown): the total
    under-counts the bytes on disk (C3)."""

    def touch(self, key: str, size: int | None = None) -> bool:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return True
            self._entries[key] = _Entry(size or 0, 0)
            self._total += size or 0
            return True


class DiscardDropsWritesInFlight(LRUFileEvictor):
    """V4/V5: ``discard`` (a file found missing) also drops an entry whose write is still in flight."""

    def discard(self, key: str) -> bool:
        with self._lock:
            entry = self._entry(key)
            if entry is None:
                return False
            del self._entries[key]
            self._total -= entry.size
            return True


class RatioIgnored(LRUFileEvictor):
    """V3: eviction for the cap stops as soon as the write fits (``cap - n``), ignoring
    ``floor(cap * eviction_ratio) - n``, so it runs again on almost every write."""

    def _make_room(self, key: str | None, size: int, others: int) -> bool:
        ratio = self._ratio
        self._ratio = 1.0
        try:
            return super()._make_room(key, size, others)
        finally:
            self._ratio = ratio


class _CallbackSkippedWhenGoneEvictor(LRUFileEvictor):
    """V6 broken: a victim whose file is already gone is dropped without ``on_evict``, so its belief
    outlives it."""

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        entry = self._entry(victim)
        if entry is not None and not entry.in_flight and victim != keep:
            try:
                self._fs.stat(self._path_of(victim))
            except FileNotFoundError:
                return entry.size  # gone: the caller drops the entry, and no on_evict was called
        return super()._evict_one(victim, keep)


class _NoRefundOnAbortEvictor(LRUFileEvictor):
    """V4/C3 broken: a failed write keeps its reservation, leaking capacity."""

    def abort(self, key: str) -> None:
        self.commit(key)


class _EvictsWritesInFlightEvictor(LRUFileEvictor):
    """V5 broken: a reserved write that is not committed yet can be chosen as a victim."""

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        entry = self._entry(victim)
        if entry is not None and entry.in_flight:
            writers, entry.writers = entry.writers, 0
            freed = super()._evict_one(victim, keep)
            if victim in self._entries:
                entry.writers = writers
            return freed
        return super()._evict_one(victim, keep)


class _CallbackOnAbortEvictor(LRUFileEvictor):
    """V6 broken: abort reports the key as evicted."""

    def abort(self, key: str) -> None:
        if key in self._entries and self._on_evict is not None:
            self._on_evict(key)
        super().abort(key)


class RetriesUnremovableEvictor(LRUFileEvictor):
    """S7 broken (the code before S7 was specified): a victim that could not be removed is tried again, with a
    callback, an unlink and a log line, by every pass that reaches it: no back-off."""

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        entry = self._entry(victim)
        if entry is not None:
            entry.resting_until = None
        return super()._evict_one(victim, keep)


class _WedgedOnEpermEvictor(LRUFileEvictor):
    """V5 broken: the first victim that cannot be removed stops eviction for the whole reservation."""

    _stuck = False

    def reserve(self, key: str, size: int) -> bool:
        self._stuck = False
        return super().reserve(key, size)

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        if self._stuck:
            return None
        entry = self._entry(victim)
        tried = entry is not None and not entry.in_flight and victim != keep
        freed = super()._evict_one(victim, keep)
        self._stuck = tried and freed is None
        return freed


class BackgroundLRUFileEvictor(LRUFileEvictor):
    """Correct under V3-bg: production's evictor turned into a background one.  A reservation never
    evicts (refused only above the cap); ``evict()`` is the pass (``_make_room`` of nothing, V3's
    eviction with nothing to write).  While ``starting`` (its store's start-up, F8) a pass is a no-op:
    V3-bg runs none in the constructor."""

    starting = False

    def _make_room(self, key: str | None, size: int, others: int) -> bool:
        if key is not None:
            return not 0 < self.max_size < size  # the write: no eviction
        return super()._make_room(key, size, others)

    def evict(self) -> bool:
        return True if self.starting else super().evict()


# -- OsEvictor and its wrong variants -------------------------------------------


class OsEvictor:
    """A correct LRU file evictor in SEMANTICS V's interface that calls ``os`` itself (V1-V6).

    ``entries``: key -> [size, writers in flight, published by one of them], least recently used first.
    """

    def __init__(
        self,
        directory: str,
        *,
        max_size: int,
        min_free_space: int,
        eviction_ratio: float,
        on_evict: Callable[[str], object],
    ) -> None:
        refuse_bad_limits(max_size, min_free_space, eviction_ratio, on_evict)  # B1 (V1)
        self.directory = directory
        self.cap, self.floor, self.ratio = max_size, min_free_space, eviction_ratio
        self.on_evict = on_evict
        self.entries: OrderedDict[str, list[int]] = OrderedDict()
        self.resting: set[str] = set()
        self.total = 0

    @property
    def enabled(self) -> bool:
        return self.cap > 0 or self.floor > 0

    def path(self, key: str) -> str:
        return os.path.join(self.directory, key + ".bin")

    def free(self) -> int:
        st = os.statvfs(self.directory)
        return st.f_bavail * st.f_frsize

    def reserve(self, key: str, nbytes: int) -> bool:
        refuse_bad_size(nbytes)  # B1 (V3)
        if not self.enabled:
            return True  # inert: nothing to enforce, nothing tracked (V1)
        if not self.admit(key, nbytes):
            return False
        old = self.entries.get(key)
        writers, published = (old[1] + 1, old[2]) if old and old[1] else (1, 0)
        if old:
            self.drop(key)
        self.entries[key] = [nbytes, writers, published]
        self.total += nbytes
        return True

    def admit(self, key: str, nbytes: int) -> bool:
        """V3: a write is admitted when room can be made for it."""
        return self.make_room(key, nbytes)

    def make_room(self, keep: str | None, nbytes: int) -> bool:
        """V3: room for ``nbytes`` more besides ``keep``'s own entry (None: nothing to write, as a pass)."""
        old = self.entries.get(keep) if keep is not None else None
        others = self.total - (old[0] if old else 0)
        if self.cap > 0:
            if nbytes > self.cap:
                return False
            if others + nbytes > self.cap:
                target, start = math.floor(self.cap * self.ratio) - nbytes, others
                others -= self.evict_while(keep, lambda freed: start - freed > target)
                if others + nbytes > self.cap:
                    return False
        if self.floor > 0:
            free = self.free()
            if free - nbytes < self.floor:
                self.evict_while(keep, lambda freed: free + freed - nbytes < self.floor)
                if self.free() - nbytes < self.floor:
                    return False
        return True

    def evict_while(self, keep: str | None, more: Callable[[int], bool]) -> int:
        """Evict least recently used entries while ``more(bytes freed)``; the bytes freed."""
        freed = 0
        for key, (size, writers, _published) in list(self.entries.items()):
            if not more(freed):
                break
            if not self.candidate(key, writers, keep):
                continue
            outcome = self.remove(key)
            if outcome == "stop":
                break
            if outcome == "removed":
                self.drop(key)
                freed += size
            elif outcome == "gone":
                freed += self.forget_vanished(key, size)
        return freed

    def candidate(self, key: str, writers: int, keep: str | None) -> bool:
        """V5: a victim may be neither in flight, nor the key being reserved, nor resting (S7)."""
        return not (writers or key == keep or key in self.resting)

    def remove(self, key: str) -> str:
        """One victim: ``removed``, ``gone`` (already), ``skipped`` (cannot be removed) or ``stop``."""
        self.on_evict(key)
        try:
            os.remove(self.path(key))
        except FileNotFoundError:
            return "gone"
        except OSError:
            self.resting.add(key)
            return "skipped"
        return "removed"

    def forget_vanished(self, key: str, size: int) -> int:
        """A victim whose file was already gone counts as evicted: its bytes come back (V5)."""
        self.drop(key)
        return size

    def drop(self, key: str) -> None:
        self.total -= self.entries.pop(key)[0]
        self.resting.discard(key)

    def commit(self, key: str) -> None:
        entry = self.entries.get(key)
        if entry is None:
            return
        if entry[1]:
            entry[1] -= 1
            entry[2] = int(entry[1] > 0)
        self.entries.move_to_end(key)

    def abort(self, key: str) -> None:
        entry = self.entries.get(key)
        if entry is None:
            return
        if entry[1] > 1:
            entry[1] -= 1
        elif entry[1] == 1 and entry[2]:
            entry[1], entry[2] = 0, 0
        else:
            self.drop(key)

    def touch(self, key: str) -> None:
        if not self.enabled:
            return
        if key in self.entries:
            self.entries.move_to_end(key)
            return
        try:
            size = os.path.getsize(self.path(key))
        except OSError:
            return
        self.entries[key] = [size, 0, 0]
        self.total += size

    def clear(self) -> None:
        for key in [k for k, e in self.entries.items() if not e[1]]:
            self.drop(key)


class StopsAtUnremovable(OsEvictor):
    """V5: a victim that cannot be removed stops the pass and keeps its place at the front: the victims
    after it are not tried, so the write is refused while room could be made.  (It rests, as the base
    does: the mistake is the stop alone.)"""

    def remove(self, key: str) -> str:
        outcome = super().remove(key)
        return "stop" if outcome == "skipped" else outcome


class CallbackAfterUnlink(OsEvictor):
    """V6: ``on_evict`` is called after the unlink, so a reader can still believe a file already gone."""

    def remove(self, key: str) -> str:
        try:
            os.remove(self.path(key))
        except FileNotFoundError:
            return "gone"
        except OSError:
            self.resting.add(key)
            return "skipped"
        finally:
            self.on_evict(key)
        return "removed"


class VanishedNotRefunded(OsEvictor):
    """V5: a victim whose file had vanished is forgotten without giving its bytes back (nothing was freed,
    so the total keeps them): capacity leaks, and the next passes evict more than they need to."""

    def forget_vanished(self, key: str, size: int) -> int:
        del self.entries[key]
        self.resting.discard(key)
        return 0


class BackgroundEvictor(OsEvictor):
    """Correct under V3-bg (``--declare eviction=background``), as the engine's ``fast_file`` backend
    evicts: a reservation never evicts (it refuses only a size above the cap), and ``evict()``, the pass
    its thread would run (here called by whoever drives it: the oracle runs it as a step), drains to the
    low watermark ``floor(cap * eviction_ratio)`` when the total is above the cap, then restores the
    free-space floor.  Undeclared it breaks V3: its writes take the store over the cap."""

    def admit(self, key: str, nbytes: int) -> bool:
        """V3-bg: no eviction in the write; refused only when it could never fit."""
        return not 0 < self.cap < nbytes

    def evict(self) -> bool:
        """V3-bg: one pass."""
        return not self.enabled or self.make_room(None, 0)


class NeverDrains(BackgroundEvictor):
    """V3-bg: the pass is a no-op (the thread is never woken, or wakes and finds nothing to do), so the
    store stays over the cap for good."""

    def evict(self) -> bool:
        return True


class DrainsToTheHighWatermark(BackgroundEvictor):
    """V3-bg: the pass stops as soon as the total is back under the cap instead of going down to
    ``floor(cap * eviction_ratio)``: the next write wakes it again, a pass per write."""

    def evict(self) -> bool:
        ratio, self.ratio = self.ratio, 1.0
        try:
            return super().evict()
        finally:
            self.ratio = ratio


class PassEvictsWritesInFlight(BackgroundEvictor):
    """V5 (V2): the pass takes an entry whose write is still in flight (reserved, not yet committed) as a
    victim: its file is unlinked under the writer, who then publishes a page the accounting forgot."""

    def candidate(self, key: str, writers: int, keep: str | None) -> bool:
        return key != keep and key not in self.resting


class NegativeSizeAdmitted(OsEvictor):
    """B1 (V3): ``reserve`` checks the type of ``nbytes`` but not its sign: a negative size is admitted
    (taken for an empty write) instead of refused."""

    def reserve(self, key: str, nbytes: int) -> bool:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise TypeError(f"nbytes must be an int, got {nbytes!r}")
        return super().reserve(key, max(nbytes, 0))


class SizeIsAValueError(OsEvictor):
    """B1 (V3): every bad ``nbytes`` is a ``ValueError`` ("a size must be a non-negative int"), a float or
    a string included, where B1 says ``TypeError`` for a wrong type."""

    def reserve(self, key: str, nbytes: int) -> bool:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError(f"nbytes must be a non-negative int, got {nbytes!r}")
        return super().reserve(key, nbytes)


class RatioUnchecked(OsEvictor):
    """B1 (V1): the limits are checked, the ratio is not: ``eviction_ratio=0`` (or 1.5, or NaN) is taken,
    and a pass then evicts everything (or nothing)."""

    # Named parameters, no **kwargs: the oracle would pass its fs to those, and this evictor calls os itself.
    def __init__(
        self, directory: str, *, max_size: int, min_free_space: int, eviction_ratio: float, on_evict: Any
    ) -> None:
        limits = {"max_size": max_size, "min_free_space": min_free_space}
        super().__init__(directory, **limits, eviction_ratio=0.9, on_evict=on_evict)
        self.ratio = eviction_ratio


CORRECT: dict[str, type] = {"OsEvictor": OsEvictor}

# V3-bg (O3): correct and wrong only when ``eviction=background`` is declared (the catalogue declares it).
CORRECT_BACKGROUND: dict[str, type] = {
    "BackgroundEvictor": BackgroundEvictor,
    "BackgroundLRUFileEvictor": BackgroundLRUFileEvictor,
}
WRONG_BACKGROUND: dict[str, tuple[type, str]] = {
    "NeverDrains": (NeverDrains, "V3-bg"),
    "DrainsToTheHighWatermark": (DrainsToTheHighWatermark, "V3-bg"),
    "PassEvictsWritesInFlight": (PassEvictsWritesInFlight, "V5"),
}

WRONG: dict[str, tuple[type, str]] = {
    "StopsAtUnremovable": (StopsAtUnremovable, "V5"),
    "CallbackAfterUnlink": (CallbackAfterUnlink, "V6"),
    "VanishedNotRefunded": (VanishedNotRefunded, "V5"),
    "NegativeSizeAdmitted": (NegativeSizeAdmitted, "B1"),
    "SizeIsAValueError": (SizeIsAValueError, "B1"),
    "RatioUnchecked": (RatioUnchecked, "B1"),
}

WRONG_PRODUCTION: dict[str, tuple[type[LRUFileEvictor], str]] = {
    "CommitKeepsReservationOrder": (CommitKeepsReservationOrder, "V4"),
    "TouchAdoptsWithoutSize": (TouchAdoptsWithoutSize, "V4"),
    "DiscardDropsWritesInFlight": (DiscardDropsWritesInFlight, "V4"),
    "RatioIgnored": (RatioIgnored, "V3"),
    "callback skipped when the file is already gone": (_CallbackSkippedWhenGoneEvictor, "V6"),
    "capacity not refunded on abort": (_NoRefundOnAbortEvictor, "V4"),
    "eviction wedged on EPERM": (_WedgedOnEpermEvictor, "V5"),
    "writes in flight evicted": (_EvictsWritesInFlightEvictor, "V5"),
    "callback on abort": (_CallbackOnAbortEvictor, "V6"),
    "victim retried before its back-off ends": (RetriesUnremovableEvictor, "S7"),
}
