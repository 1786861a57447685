"""Deliberately wrong file stores: each breaks one clause, and a checker must catch it.

Each variant is a small subclass of the production class with one mistake that
real file backends have made.  ``VARIANTS`` maps a name to ``(factory,
clauses broken)``; the lock-step machine must fail on every variant listed in
``CAUGHT_BY_MACHINE``, and ``NoC1Guard`` (a race, invisible to a sequential
machine) must fail the deterministic race tests in
``tests/concurrency/test_file_store_threads.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from hicache.file_evictor import LRUFileEvictor
from hicache.file_store import HiCacheFile
from hicache.fs import DirEntry, FileStat

__all__ = [
    "CAUGHT_BY_MACHINE",
    "EVICTOR_VARIANTS",
    "NEEDS_OVERLAPPING_NAMESPACES",
    "NEEDS_PLANTED_NODES",
    "VARIANTS",
    "EvictsWritesInFlight",
    "NoC1Guard",
    "RetriesUnremovableEvictor",
    "TakesAnyNodeForAPage",
]


class _WithEvictor(HiCacheFile):
    """The store with its evictor turned into ``evictor_variant`` (same state) before start-up."""

    evictor_variant: ClassVar[type[LRUFileEvictor]]

    def _start(self) -> None:
        self._evictor.__class__ = self.evictor_variant
        super()._start()


class _CallbackSkippedWhenGoneEvictor(LRUFileEvictor):
    """V6 broken: a victim whose file is already gone is dropped without ``on_evict``, so its belief
    outlives it."""

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        entry = self._entries.get(victim)
        if entry is not None and not entry.in_flight and victim != keep:
            try:
                self._fs.stat(self._path_of(victim))
            except FileNotFoundError:
                return entry.size  # gone: the caller drops the entry, and no on_evict was called
        return super()._evict_one(victim, keep)


class CallbackSkippedWhenGone(_WithEvictor):
    evictor_variant = _CallbackSkippedWhenGoneEvictor


class _NoRefundOnAbortEvictor(LRUFileEvictor):
    """V4/C3 broken: a failed write keeps its reservation, leaking capacity."""

    def abort(self, key: str) -> None:
        self.commit(key)


class _EvictsWritesInFlightEvictor(LRUFileEvictor):
    """V5 broken: a reserved write that is not committed yet can be chosen as a victim."""

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        entry = self._entries.get(victim)
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
    """S7 broken (the code before issue 12): a victim that could not be removed is tried again, with a
    callback, an unlink and a log line, by every pass that reaches it: no back-off."""

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        entry = self._entries.get(victim)
        if entry is not None:
            entry.resting_until = None
        return super()._evict_one(victim, keep)


class EvictsWritesInFlight(_WithEvictor):
    """V5 broken (a race): caught by the linearizability check of forced histories."""

    evictor_variant = _EvictsWritesInFlightEvictor


class NoRefundOnAbort(_WithEvictor):
    evictor_variant = _NoRefundOnAbortEvictor


class _WedgedOnEpermEvictor(LRUFileEvictor):
    """V5 broken: the first victim that cannot be removed stops eviction for the whole reservation."""

    _stuck = False

    def reserve(self, key: str, size: int) -> bool:
        self._stuck = False
        return super().reserve(key, size)

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        if self._stuck:
            return None
        tried = victim in self._entries and not self._entries[victim].in_flight and victim != keep
        freed = super()._evict_one(victim, keep)
        self._stuck = tried and freed is None
        return freed


class WedgedOnEperm(_WithEvictor):
    evictor_variant = _WedgedOnEpermEvictor


class NoRefundWhenMissing(HiCacheFile):
    """F4/C3 broken: a file removed behind the store's back keeps its bytes counted forever."""

    def _forget_missing(self, key: str, mark: int) -> None:
        if self._beliefs is not None:
            self._beliefs.remove(key)


class ExistsAlwaysStats(HiCacheFile):
    """F6 broken: the metadata cache is consulted by set but never by exists."""

    def exists(self, key: str) -> bool:
        self._check_key(key)
        return self._probe(key, touch=False) is not None


class ScansOtherNamespaces(HiCacheFile):
    """F1/F8 broken: every ``.bin`` file is taken for one of ours (counted, evicted at start-up)."""

    def _nodes(self, entries: Iterable[DirEntry]) -> list[tuple[DirEntry, str]]:
        suffix = self._suffix
        ours = [e for e in entries if e.name.endswith(".bin") and not e.name.startswith(".")]
        return [(e, e.name[: -len(suffix)] if e.name.endswith(suffix) else e.name[:-4]) for e in ours]


class PlainSuffixNaming(HiCacheFile):
    """F1 broken (the first design): ``<key><namespace>.bin`` unescaped, a file is ours when it ends with
    our namespace, so "_x_ns" files are taken for "_ns" ones."""

    def _path(self, key: str) -> str:
        return os.path.join(self._directory, key + self._suffix)

    def _nodes(self, entries: Iterable[DirEntry]) -> list[tuple[DirEntry, str]]:
        suffix = self._suffix
        ours = [e for e in entries if len(e.name) > len(suffix) and e.name.endswith(suffix)]
        ours = [e for e in ours if e.name[0] != "."]
        return [(e, e.name[: -len(suffix)]) for e in ours]


class KeepsTempOnFailure(HiCacheFile):
    """F3 broken: a failed write leaves its temp file behind."""

    def _remove_temp(self, temp: str) -> None:
        pass


class NoC1Guard(HiCacheFile):
    """C1 broken: a probe teaches its belief whatever removal overlapped it."""

    def _learn(self, key: str, epoch: int, size: int | None, *, touch: bool = True) -> None:
        with self._lock:
            if touch:
                self._evictor.touch(key, size)
            if self._beliefs is not None:
                self._beliefs.add(key)


class TakesAnyNodeForAPage(HiCacheFile):
    """S3 broken (the code before issue 12): whatever is named like a page is one, symlinks, FIFOs,
    directories and other users' files included."""

    def _is_page(self, st: FileStat) -> bool:
        return True

    def _is_page_entry(self, entry: DirEntry) -> bool:
        return True


VARIANTS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "callback skipped when the file is already gone": (CallbackSkippedWhenGone, ("V6", "C1")),
    "capacity not refunded on abort": (NoRefundOnAbort, ("V4", "C3")),
    "eviction wedged on EPERM": (WedgedOnEperm, ("V5",)),
    "capacity not refunded when a file vanished": (NoRefundWhenMissing, ("F4", "C3")),
    "exists ignores the metadata cache": (ExistsAlwaysStats, ("F6",)),
    "start-up scan counts other namespaces' files": (ScansOtherNamespaces, ("F1", "F8")),
    "temp file left after a failed write": (KeepsTempOnFailure, ("F3",)),
    "namespace taken as a plain suffix": (PlainSuffixNaming, ("F1",)),
    "no C1 guard": (NoC1Guard, ("C1",)),
    "any node taken for a page": (TakesAnyNodeForAPage, ("S3",)),
}

EVICTOR_VARIANTS: dict[str, type[LRUFileEvictor]] = {
    "callback skipped when the file is already gone": _CallbackSkippedWhenGoneEvictor,
    "capacity not refunded on abort": _NoRefundOnAbortEvictor,
    "eviction wedged on EPERM": _WedgedOnEpermEvictor,
    "writes in flight evicted": _EvictsWritesInFlightEvictor,
    "callback on abort": _CallbackOnAbortEvictor,
}

# Caught only by a world where another namespace ends like ours (spec/machines/file_store.py's "_x_ns").
NEEDS_OVERLAPPING_NAMESPACES = ["namespace taken as a plain suffix"]
# Caught only by a world where another user plants nodes under a key's name (S3).
NEEDS_PLANTED_NODES = ["any node taken for a page"]
CAUGHT_BY_MACHINE = [
    name
    for name in VARIANTS
    if name != "no C1 guard" and name not in NEEDS_OVERLAPPING_NAMESPACES + NEEDS_PLANTED_NODES
]
