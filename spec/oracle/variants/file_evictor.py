"""LRUFileEvictor (and HiCacheFile) variants with one mistake each, on top of the production classes.

The catalogue of the oracle's tests adds these to the evictor and store variants of
``tests/variants/file_store.py``.  Each overrides one method of
``hicache.file_evictor.LRUFileEvictor`` the way an optimizer plausibly might.
"""

from __future__ import annotations

from hicache.file_evictor import LRUFileEvictor, _Entry
from hicache.file_store import HiCacheFile

__all__ = [
    "WRONG",
    "CommitKeepsReservationOrder",
    "DiscardDropsWritesInFlight",
    "RatioIgnored",
    "RatioIgnoredStore",
    "TouchAdoptsWithoutSize",
]


class CommitKeepsReservationOrder(LRUFileEvictor):
    """V4: ``commit`` only clears the in-flight mark: recency counts from the reservation, so a write
    reserved first but published last is evicted before older files."""

    def commit(self, key: str, size: int | None = None) -> None:
        with self.lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry.writers, entry.published = 0, False


class TouchAdoptsWithoutSize(LRUFileEvictor):
    """V4: ``touch`` adopts an untracked file without a ``stat`` (size 0 when unknown): the total
    under-counts the bytes on disk (C3)."""

    def touch(self, key: str, size: int | None = None) -> bool:
        with self.lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return True
            self._entries[key] = _Entry(size or 0, 0)
            self._total += size or 0
            return True


class DiscardDropsWritesInFlight(LRUFileEvictor):
    """V4/V5: ``discard`` (a file found missing) also drops an entry whose write is still in flight."""

    def discard(self, key: str) -> bool:
        with self.lock:
            entry = self._entries.pop(key, None)
            if entry is None:
                return False
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


class RatioIgnoredStore(HiCacheFile):
    """V3: the store with the ``RatioIgnored`` evictor."""

    _evictor_class = RatioIgnored


# name -> (variant, clause, component)
WRONG: dict[str, tuple[type, str, str]] = {
    "CommitKeepsReservationOrder": (CommitKeepsReservationOrder, "V4", "file-evictor"),
    "TouchAdoptsWithoutSize": (TouchAdoptsWithoutSize, "V4", "file-evictor"),
    "DiscardDropsWritesInFlight": (DiscardDropsWritesInFlight, "V4", "file-evictor"),
    "RatioIgnored": (RatioIgnored, "V3", "file-evictor"),
    "RatioIgnoredStore": (RatioIgnoredStore, "V3", "file-store"),
}
