"""File store variants (F1-F8, V, C1, C3, S3): ``hicache.HiCacheFile`` with one mistake each.

Mistakes that real file backends have made, several built on an evictor variant of
``spec.variants.file_evictor``.

* ``WRONG``: every one the oracle's catalogue runs; the store's lock-step machine (with a pinned
  scenario each, tests/stateful/test_file_store_machine.py) and the model checker catch those in
  ``CAUGHT_BY_MACHINE``, the machine those in ``NEEDS_OVERLAPPING_NAMESPACES`` and
  ``NEEDS_PLANTED_NODES`` in the worlds they name.
* ``RACES``: mistakes only a race between threads shows, which no sequential machine can: the
  deterministic race tests (tests/concurrency/test_file_store_threads.py,
  tests/modelcheck/test_c1_schedules.py) and the linearizability check of forced histories
  (tests/concurrency/test_file_store_linearizability.py) catch them.
* ``CORRECT_BACKGROUND``, ``WRONG_BACKGROUND``: stores whose evictor runs in the background (V3-bg),
  checked with ``eviction=background`` declared (O3): the store's ``evict()`` is its evictor's pass.
* ``WRONG_BACKGROUND_SCAN``: stores whose start-up scan runs in the background (F8-bg) and adopts from its
  stale listing what it must not; the machine with the scan as a rule (``BackgroundScanMachine``) catches
  them (tests/stateful/test_background_scan.py).  With ``startup_scan="blocking"`` they are production.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from hicache.file_knowledge import FileKnowledge
from hicache.file_layout import FileLayout, FileNaming
from hicache.file_startup import FileStartup
from hicache.file_store import HiCacheFile
from hicache.file_trust import FileTrust
from hicache.fs import DirEntry, FileStat

from ..models.refusals import SETTINGS
from .file_evictor import (
    BackgroundLRUFileEvictor,
    RatioIgnored,
    _CallbackSkippedWhenGoneEvictor,
    _EvictsWritesInFlightEvictor,
    _NoRefundOnAbortEvictor,
    _WedgedOnEpermEvictor,
)

__all__ = [
    "CAUGHT_BY_MACHINE",
    "CONCURRENT",
    "CONCURRENT_CORRECT",
    "CORRECT_BACKGROUND",
    "NEEDS_OVERLAPPING_NAMESPACES",
    "NEEDS_PLANTED_NODES",
    "RACES",
    "WRONG",
    "WRONG_BACKGROUND",
    "WRONG_BACKGROUND_SCAN",
    "BackgroundStore",
    "BackgroundStoreNeverDrains",
    "BatchGetForgetsWithALateMark",
    "CallbackSkippedWhenGone",
    "DotKeysAccepted",
    "EvictsWritesInFlight",
    "ExistsAlwaysStats",
    "KeepsTempOnFailure",
    "KeyTypeIsAValueError",
    "NoC1Guard",
    "NoRefundOnAbort",
    "NoRefundWhenMissing",
    "PlainSuffixNaming",
    "RatioIgnoredStore",
    "ScanCountsWrittenPagesTwice",
    "ScanReadoptsRemovedPages",
    "ScansOtherNamespaces",
    "TakesAnyNodeForAPage",
    "UnknownSettingsIgnored",
    "UnlinksOutsideItsGuard",
    "WedgedOnEperm",
]

logger = logging.getLogger("hicache.file_store")


class CallbackSkippedWhenGone(HiCacheFile):
    """V6, C1, V3 broken: the store with the evictor that drops a victim whose file is already gone
    without ``on_evict``, so its belief outlives it (and the writes it then skips make later evictions
    pick other victims than the spec's: V3 is where the default budget first sees it)."""

    evictor_class = _CallbackSkippedWhenGoneEvictor


class EvictsWritesInFlight(HiCacheFile):
    """V5 broken (a race): caught by the linearizability check of forced histories."""

    evictor_class = _EvictsWritesInFlightEvictor


class NoRefundOnAbort(HiCacheFile):
    """V4, C3 broken: the store with the evictor whose failed write keeps its reservation."""

    evictor_class = _NoRefundOnAbortEvictor


class WedgedOnEperm(HiCacheFile):
    """V5 broken: the store with the evictor that stops at the first victim it cannot remove."""

    evictor_class = _WedgedOnEpermEvictor


class RatioIgnoredStore(HiCacheFile):
    """V3: the store with the ``RatioIgnored`` evictor."""

    evictor_class = RatioIgnored


class _NoRefundKnowledge(FileKnowledge):
    """F4/C3 broken: a missing file's belief goes, its bytes stay counted."""

    def forget_missing(self, key: str, published: int) -> None:
        if self.beliefs is not None:
            self.beliefs.remove(key)


class NoRefundWhenMissing(HiCacheFile):
    """F4/C3 broken: a file removed behind the store's back keeps its bytes counted forever."""

    knowledge_class = _NoRefundKnowledge


class _UnconsultedKnowledge(FileKnowledge):
    """F6 broken: ``exists`` never finds a belief."""

    def believes(self, key: str) -> bool:
        return False


class ExistsAlwaysStats(HiCacheFile):
    """F6 broken: the metadata cache is consulted by set but never by exists."""

    knowledge_class = _UnconsultedKnowledge


class _AnyBinNaming(FileNaming):
    """F1 broken: every ``.bin`` file is one of ours."""

    def keys_of(self, names: list[str]) -> list[str | None]:
        suffix = self.namespace + ".bin"
        return [
            None
            if not name.endswith(".bin") or name.startswith(".")
            else name[: -len(suffix)]
            if name.endswith(suffix)
            else name[:-4]
            for name in names
        ]


class ScansOtherNamespaces(HiCacheFile):
    """F1/F8 broken: every ``.bin`` file is taken for one of ours (counted, evicted at start-up)."""

    naming_class = _AnyBinNaming


class _PlainSuffixNaming(FileNaming):
    """F1 broken: ``<key><namespace>.bin`` unescaped; a file ending with the namespace is ours."""

    def name(self, key: str) -> str:
        return key + self.namespace + ".bin"

    def keys_of(self, names: list[str]) -> list[str | None]:
        suffix = self.namespace + ".bin"
        ours = [len(name) > len(suffix) and name.endswith(suffix) and name[0] != "." for name in names]
        return [name[: -len(suffix)] if own else None for name, own in zip(names, ours, strict=True)]


class PlainSuffixNaming(HiCacheFile):
    """F1 broken (the first design): ``<key><namespace>.bin`` unescaped, a file is ours when it ends with
    our namespace, so "_x_ns" files are taken for "_ns" ones."""

    naming_class = _PlainSuffixNaming


class _TempKeepingLayout(FileLayout):
    """F3 broken: a temp file is never removed."""

    def remove_temp(self, temp: str) -> None:
        pass


class KeepsTempOnFailure(HiCacheFile):
    """F3 broken: a failed write leaves its temp file behind."""

    layout_class = _TempKeepingLayout


class _UnguardedKnowledge(FileKnowledge):
    """C1 broken: no removal mark is checked."""

    def learn(self, key: str, removals: int, size: int | None, *, touch: bool = True) -> None:
        with self.lock:
            if touch:
                self.evictor.touch(key, size)
            if self.beliefs is not None:
                self.beliefs.add(key)


class NoC1Guard(HiCacheFile):
    """C1 broken: a probe teaches its belief whatever removal overlapped it."""

    knowledge_class = _UnguardedKnowledge


class _AnyNodeTrust(FileTrust):
    """S3 broken: every node is a page."""

    def is_page(self, node: FileStat | DirEntry) -> bool:
        return True


class TakesAnyNodeForAPage(HiCacheFile):
    """S3 broken (the code before S3 was specified): whatever is named like a page is one, symlinks, FIFOs,
    directories and other users' files included."""

    trust_class = _AnyNodeTrust


class UnlinksOutsideItsGuard(HiCacheFile):
    """C5 (C1): ``delete`` drops the belief under the lock, then unlinks outside it, with no removal
    opened in the guard: a probe between the two (``exists`` of the key) finds the file, sees no removal
    under way and teaches the belief again, which then outlives the file.  One call at a time it is
    production's delete; only threads held at the filesystem show it (O6)."""

    def delete(self, key: str) -> bool:
        self._check_key(key)
        path = self._layout.path(key)
        with self._lock:
            if self._beliefs is not None:
                self._beliefs.remove(key)
        try:
            self._fs.unlink(path)  # outside the lock and the guard: the race window
        except FileNotFoundError:
            pass
        except OSError as exc:
            logger.warning("file store: cannot delete %r: %s", path, exc)
            return False
        with self._lock:
            self._evictor.discard(key)
        return True


class _LateMarkKnowledge(FileKnowledge):
    """C5 broken: a forget outside ``observe`` (``batch_get``'s) reads the publications mark late."""

    def forget_missing(self, key: str, published: int) -> None:
        # read now: a write committed since the read goes unseen
        super().forget_missing(key, self.overlaps.publications)

    def observe(
        self,
        key: str,
        found: bool,
        missing: bool,
        removals: int,
        published: int,
        size: int | None,
        *,
        touch: bool = True,
    ) -> None:
        if missing:
            FileKnowledge.forget_missing(self, key, published)  # a single get's forget: production's
        else:
            super().observe(key, found, missing, removals, published, size, touch=touch)


class BatchGetForgetsWithALateMark(HiCacheFile):
    """C5 (F4, C3): ``batch_get`` forgets a missing key with the publications mark read when it forgets,
    not the one read before its read (a batch's shortcut: one mark read per miss, at the forget).  A
    write of that key committed between the read and the forget loses its entry: the file stays on
    disk untracked, so no eviction ever takes it and the store goes over its cap (finding 4 of
    docs/LINEARIZABILITY.md, put back in the batch).  A single ``get`` is production's, and one call at
    a time nothing is committed in between: only threads held at the filesystem show it (O6)."""

    knowledge_class = _LateMarkKnowledge


class _DotKeysNaming(FileNaming):
    """B1 broken: a key starting with ``.`` passes the check."""

    def check(self, key: object) -> None:
        if isinstance(key, str) and key.startswith(".") and len(key) > 1:
            key = key[1:]
        super().check(key)


class DotKeysAccepted(HiCacheFile):
    """B1 (F2): the key check looks for a separator and NUL only, so a key starting with ``.`` is taken: its
    file is hidden, and one named like a temp file (``.0123456789ab.tmp`` with the namespace ``""``...)
    would be swept by another store's start-up."""

    naming_class = _DotKeysNaming


class _KeyTypeNaming(FileNaming):
    """B1 broken: a key of the wrong type is a ``ValueError``."""

    def check(self, key: object) -> None:
        if not isinstance(key, str):
            raise ValueError(f"key must be a valid str, got {key!r}")
        super().check(key)


class KeyTypeIsAValueError(HiCacheFile):
    """B1 (F2): a key that is not a ``str`` is refused with a ``ValueError`` (every bad key alike) where B1
    says ``TypeError`` for a wrong type."""

    naming_class = _KeyTypeNaming


class UnknownSettingsIgnored(HiCacheFile):
    """B1 (F9): a setting ``extra_config`` does not know is dropped instead of refused, so a misspelt key
    (``max_sise``) leaves the default in force, silently."""

    def __init__(self, storage_dir: str | None = None, **kwargs: Any) -> None:
        config = kwargs.get("extra_config")
        if isinstance(config, Mapping):
            known = set(SETTINGS)
            kwargs["extra_config"] = {k: v for k, v in config.items() if not isinstance(k, str) or k in known}
        super().__init__(storage_dir, **kwargs)


WRONG: dict[str, tuple[Callable[..., Any], str]] = {
    "callback skipped when the file is already gone": (CallbackSkippedWhenGone, "V6"),
    "capacity not refunded on abort": (NoRefundOnAbort, "V4"),
    "eviction wedged on EPERM": (WedgedOnEperm, "V5"),
    "capacity not refunded when a file vanished": (NoRefundWhenMissing, "F4"),
    "exists ignores the metadata cache": (ExistsAlwaysStats, "F6"),
    "start-up scan counts other namespaces' files": (ScansOtherNamespaces, "F1"),
    "temp file left after a failed write": (KeepsTempOnFailure, "F3"),
    "namespace taken as a plain suffix": (PlainSuffixNaming, "F1"),
    "any node taken for a page": (TakesAnyNodeForAPage, "S3"),
    "eviction ratio ignored": (RatioIgnoredStore, "V3"),
    "keys starting with a dot accepted": (DotKeysAccepted, "B1"),
    "a key of the wrong type is a ValueError": (KeyTypeIsAValueError, "B1"),
    "unknown settings ignored": (UnknownSettingsIgnored, "B1"),
}


class _StartsWithoutEvicting(FileStartup):
    """V3-bg: start-up runs no pass of the background evictor."""

    def start(self) -> None:
        evictor: Any = self.evictor
        evictor.starting = True
        try:
            super().start()
        finally:
            evictor.starting = False


class BackgroundStore(HiCacheFile):
    """Correct under V3-bg: the store over :class:`BackgroundLRUFileEvictor`.  Its writes never evict;
    ``evict()`` is one pass of its evictor (what its thread would run); start-up runs none."""

    evictor_class = BackgroundLRUFileEvictor
    startup_class = _StartsWithoutEvicting

    def evict(self) -> bool:
        """V3-bg: one pass of the background evictor."""
        return self._evictor.evict()


class BackgroundStoreNeverDrains(BackgroundStore):
    """V3-bg: the store's evictor thread never runs a pass (``evict()`` does nothing): the store stays over
    its cap for good."""

    def evict(self) -> bool:
        return True


CORRECT_BACKGROUND: dict[str, Callable[..., Any]] = {"BackgroundStore": BackgroundStore}
WRONG_BACKGROUND: dict[str, tuple[Callable[..., Any], str]] = {
    "background pass never drains": (BackgroundStoreNeverDrains, "V3-bg"),
}


class _ForgetfulStartup(FileStartup):
    """F8-bg broken: nothing is noted gone."""

    def note_gone(self, key: str) -> None:
        pass


class ScanReadoptsRemovedPages(HiCacheFile):
    """F8-bg broken: the background scan keeps no note of what this store removed since the listing began,
    so a page deleted, evicted or cleared during the scan is adopted again from the stale listing: its
    bytes are counted for a file that is gone (C3), and its belief outlives it (C1)."""

    startup_class = _ForgetfulStartup


class _DoubleCountingStartup(FileStartup):
    """F8-bg broken: a batch's tracked pages are counted again."""

    def adopt_scanned(self, scan: Any, found: Any) -> None:
        with self._lock:
            listed = zip(found.keys, found.sizes, strict=True)
            tracked = [size for key, size in listed if key in self.evictor]
            super().adopt_scanned(scan, found)
            self.evictor._total += sum(tracked)


class ScanCountsWrittenPagesTwice(HiCacheFile):
    """F8-bg broken: a batch adds the listed bytes of every page of it to the total, those this store
    tracks already (written, read or found during the scan) included: the entry keeps one size, the total
    counts it twice (C3)."""

    startup_class = _DoubleCountingStartup


WRONG_BACKGROUND_SCAN: dict[str, tuple[Callable[..., Any], str]] = {
    "scan re-adopts a page removed during the scan": (ScanReadoptsRemovedPages, "C3"),
    "scan counts a page written during the scan twice": (ScanCountsWrittenPagesTwice, "C3"),
}

RACES: dict[str, tuple[Callable[..., Any], str]] = {
    "no C1 guard": (NoC1Guard, "C1"),
    "writes in flight evicted": (EvictsWritesInFlight, "V5"),
}

CAUGHT_BY_MACHINE = [
    "callback skipped when the file is already gone",
    "capacity not refunded on abort",
    "eviction wedged on EPERM",
    "capacity not refunded when a file vanished",
    "exists ignores the metadata cache",
    "start-up scan counts other namespaces' files",
    "temp file left after a failed write",
    "eviction ratio ignored",
]
# Caught only by a world where another namespace ends like ours (spec/machines/file_store.py's "_x_ns").
NEEDS_OVERLAPPING_NAMESPACES = ["namespace taken as a plain suffix"]
# Caught only by a world where another user plants nodes under a key's name (S3).
NEEDS_PLANTED_NODES = ["any node taken for a page"]

# name -> (variant, the clause its mistake breaks): FAIL under ``--threads``, PASS one call at a time.
CONCURRENT: dict[str, tuple[Callable[..., Any], str]] = {
    "unlinks outside its guard": (UnlinksOutsideItsGuard, "C5"),
    "batch_get forgets with a late mark": (BatchGetForgetsWithALateMark, "C5"),
}
# What must PASS under ``--threads``.
CONCURRENT_CORRECT: dict[str, Callable[..., Any]] = {"HiCacheFile": HiCacheFile}
