"""Executable model of the file evictor (docs/SEMANTICS.md V1-V6, S7, C3, C5): the entries and their passes.

The state: ``lru``, the entries ``(key, size, in_flight)``, least recently used first (their total is the
sum of the sizes: C3); ``writers``, the writes of each key in flight (C5: two at once); ``published``, the
keys one of whose writes in flight published already; ``resting`` (S7).  The limits are ``cap`` and
``ratio`` (V3) and ``min_free`` (V5); eviction is off when both are 0 (V1).  The victims are chosen by the
pure passes of :mod:`.file_names` (where CrossHair checks them); what a victim's removal does to the
directory and the beliefs is the store's (:class:`spec.models.file_store.FileStoreModel`, the one subclass,
which gives the four methods at the end).  O3 (the evictor's machine): ``commit_moves``, whether commit
makes the key the most recently used (V4 leaves it open); ``own_counted``, whether a reservation counts
the key's own earlier entry against the limits and may evict it (V3's "total + n" read literally);
``background`` (V3-bg, declared ``eviction=background``): a reservation never evicts (it refuses only a
size above the cap) and the limits are restored by the passes, ``evict``, each a step of its own; the
model keeps what the last pass left (``pass_left``) and the bytes that entered the accounting since
(``since_pass``), V3-bg's bound on how far over the cap the total may be.
S7: a victim whose unlink failed rests ``RETRY_UNREMOVABLE_AFTER`` (30 s) of the clock: no pass tries it
until then; a new write of the key, or the entry dropped, ends the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

from .file_names import Entry, cap_pass, flagged, renewed, space_pass, total
from .refusals import MAX_BYTES, refuse_bad_limits, refuse_bad_size

__all__ = [
    "MAX_BYTES",
    "RETRY_UNREMOVABLE_AFTER",
    "EvictorModel",
    "Faults",
    "refuse_bad_limits",
    "refuse_bad_size",
]

RETRY_UNREMOVABLE_AFTER = 30.0  # S7: seconds a victim that could not be unlinked is left alone


class Faults(Protocol):
    """The world's faults as the store's model reads them (``world.filesystem.FaultLedger`` is one)."""

    def take(self, op: str, reader: str) -> int | None: ...  # write, replace, read, short: the errno

    def stuck(self, path: str) -> bool: ...  # the unlink of ``path`` fails


class EvictorModel:
    """The evictor's model: ``reserve``, ``commit``, ``abort``, ``touch``, ``discard``, ``evict`` and two
    forms of ``clear``, as ``FileEvictor``'s, against a disk the subclass models."""

    def __init__(
        self,
        cap: int,
        ratio: float,
        min_free: int,
        clock: Callable[[], float],
        on_evict: Callable[[str], object],
        commit_moves: bool,
        own_counted: bool,
        background: bool = False,
    ) -> None:
        self.cap, self.ratio, self.min_free, self.clock = cap, ratio, min_free, clock
        self.on_evict, self.commit_moves, self.own_counted = on_evict, commit_moves, own_counted
        self.background = background
        self.pass_left = 0  # V3-bg: the total the last pass (or the start) left
        self.since_pass = 0  # V3-bg: the bytes that entered the accounting since then
        self.pass_over = False  # V3-bg: the last pass began over the cap
        self.lru: list[Entry] = []
        self.writers: dict[str, int] = {}
        self.published: set[str] = set()
        self.resting: dict[str, float] = {}  # S7: key -> end of its rest

    def reserve(self, key: str, size: int) -> bool:
        refuse_bad_size(size)  # B1 (V3), before any change
        if self.background:  # V3-bg: the write does not evict; it is refused only if it can never fit
            if 0 < self.cap < size:
                return False
        elif (self.cap > 0 or self.min_free > 0) and not self._make_room(key, size):
            return False
        self.since_pass += size
        self.writers[key] = self.writers.get(key, 0) + 1  # C5: maybe a second write of key in flight
        self.lru = renewed(self.lru, key, size, True)
        self.resting.pop(key, None)  # a new entry: the old one's rest is over (S7)
        return True

    def _written(self, key: str) -> int:
        """C5: one write of ``key`` fewer in flight; how many are left."""
        more = self.writers.pop(key, 1) - 1
        if more:
            self.writers[key] = more
        return more

    def commit(self, key: str) -> None:
        """V4: no longer in flight (unless another write of it is, C5), most recently used (or, O3,
        where its reservation put it)."""
        more = self._written(key)
        (self.published.add if more else self.published.discard)(key)
        mine = [e for e in self.lru if e[0] == key]
        moved = mine and self.commit_moves
        self.lru = renewed(self.lru, key, mine[0][1], more > 0) if moved else flagged(self.lru, key, more > 0)

    def abort(self, key: str) -> None:
        """V4: the entry goes, unless another write of it is in flight or has published it (C5)."""
        if self._written(key):
            return
        if key in self.published:
            self.published.discard(key)
            self.lru = flagged(self.lru, key, False)
        else:
            self.lru = [e for e in self.lru if e[0] != key]
            self.resting.pop(key, None)

    def touch(self, key: str, size: int | None = None) -> bool:
        """V4: most recently used; an untracked file is adopted with its real size."""
        entry = next((e for e in self.lru if e[0] == key), None)
        if entry is None and size is None:
            size = self.size_on_disk(key)
            if size is None:
                return False
        if entry is None:
            self.since_pass += size or 0
        self.lru = renewed(self.lru, *(entry or (key, size or 0, False)))
        return True

    def discard(self, key: str) -> bool:
        before = len(self.lru)
        self.lru = [e for e in self.lru if e[0] != key or e[2]]
        if len(self.lru) < before:
            self.resting.pop(key, None)
        return len(self.lru) < before

    def evict(self) -> bool:
        """V3 with nothing to write (start-up); under V3-bg, one pass of the background evictor: over the
        cap (the high watermark) it drains to ``floor(cap * ratio)`` (the low one), and restores the
        free-space floor.  True when both limits hold afterwards."""
        self.pass_over = self.cap > 0 and total(self.lru) > self.cap
        fits = not (self.cap > 0 or self.min_free > 0) or self._make_room(None, 0)
        self.pass_left, self.since_pass = total(self.lru), 0
        return fits

    def over_cap_bound(self) -> int:
        """V3-bg: the most the total may be now: what the last pass left plus the bytes admitted since."""
        return self.pass_left + self.since_pass

    def drained(self) -> bool:
        """V3-bg, after a pass: a total that was over the cap is at most the low watermark now, or no
        candidate is left (every entry left is in flight, resting or cannot be removed).  (The free-space
        floor is restored as V3 says, by an estimate: a victim whose file had vanished frees nothing, so
        a pass may end short of it, and answers False.)"""
        if not self.pass_over or total(self.lru) <= math.floor(self.cap * self.ratio):
            return True
        unremovable, resting = self._spared()
        return all(e[2] or e[0] in unremovable or e[0] in resting for e in self.lru)

    def seed(self, entries: list[Entry]) -> None:
        """Start-up (F8): ``entries`` are tracked, none in flight or resting, and a pass brings them within
        the limits; V3-bg: no pass in the constructor, the first pass brings the files found down."""
        self.forget_all()
        self.lru = entries
        if self.background:
            self.pass_left, self.since_pass = total(entries), 0
        else:
            self.evict()

    def forget_all(self) -> None:
        """The evictor's ``clear`` that forgets writes in flight too (a choice V leaves open, O3)."""
        self.lru, self.writers, self.published, self.resting = [], {}, set(), {}

    def forget_committed(self) -> None:
        """The evictor's ``clear``: writes in flight keep their entries."""
        self.lru = [e for e in self.lru if e[2]]
        self.resting = {k: t for k, t in self.resting.items() if any(e[0] == k for e in self.lru)}

    def _make_room(self, keep: str | None, size: int) -> bool:
        keep = None if self.own_counted else keep
        spared = self._spared()  # one reading for both passes
        own = sum(e[1] for e in self.lru if e[0] == keep)
        if self.cap > 0:
            if size > self.cap:
                return False
            if total(self.lru) - own + size > self.cap:
                self._apply(*cap_pass(self.lru, keep, size, self.cap, self.ratio, *spared))
                if total(self.lru) - own + size > self.cap:
                    return False
        if self.min_free > 0 and self.free() - size < self.min_free:
            self._apply(*space_pass(self.lru, keep, size, self.min_free, self.free(), *spared))
            return self.free() - size >= self.min_free
        return True

    def _relieve(self, key: str, size: int) -> bool:
        """S8: ENOSPC on ``key``'s write: evict as for a cap at the other entries' bytes; True when
        anything was evicted.  Eviction off (V1): nothing."""
        others = total(self.lru) - sum(e[1] for e in self.lru if e[0] == key)
        if not (self.cap > 0 or self.min_free > 0) or others <= 0:
            return False
        before = len(self.lru)
        self._apply(*cap_pass(self.lru, key, size, others, self.ratio, *self._spared()))
        return len(self.lru) < before

    def _spared(self) -> tuple[frozenset[str], frozenset[str]]:
        """The entries whose file cannot be unlinked, and S7: those whose unlink failed a back-off ago."""
        now = self.clock()
        resting = (k for k, until in self.resting.items() if until - RETRY_UNREMOVABLE_AFTER <= now < until)
        return frozenset(e[0] for e in self.lru if self.unremovable(e[0])), frozenset(resting)

    def _apply(self, left: list[Entry], tried: list[str]) -> None:
        """V6: each victim loses its belief before its unlink; removable ones lose their file; S7: an
        unremovable one rests."""
        for key in tried:
            self.on_evict(key)
            if self.remove(key):
                self.resting.pop(key, None)
            else:
                self.resting[key] = self.clock() + RETRY_UNREMOVABLE_AFTER
        self.lru = left

    # -- the disk, as the store models it -------------------------------------

    def free(self) -> int:
        """The free bytes on the disk (V5)."""
        raise NotImplementedError

    def size_on_disk(self, key: str) -> int | None:
        """The size of ``key``'s file, or None when it has none (``touch`` adopts a file with it)."""
        raise NotImplementedError

    def unremovable(self, key: str) -> bool:
        """``key``'s file cannot be unlinked (it is never counted as freed)."""
        raise NotImplementedError

    def remove(self, key: str) -> bool:
        """V6: a victim's removal, after its ``on_evict``: False when its file could not be unlinked."""
        raise NotImplementedError
