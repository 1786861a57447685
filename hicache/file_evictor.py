"""LRU accounting and eviction of the file store's files (docs/SEMANTICS.md V1-V6).

:class:`~hicache.file_store.HiCacheFile` asks :meth:`LRUFileEvictor.reserve` before every write; the evictor
keeps the namespace's files under ``max_size`` bytes and the filesystem's free space at or above
``min_free_space`` by unlinking the least recently used files that are not in flight (V5; a write's abort
drops its entry, V4).  It keeps the accounting of C3 whatever the configuration, rests a file it could not
unlink (S7), relieves an ``ENOSPC`` (S8), and tells the store whether a miss is older than a publication
(F4, C5).

Complexity: ``commit``/``abort``/``touch``/``discard``/``forget_missing`` O(1); ``reserve`` and
``relieve`` O(1) plus O(victims tried + entries skipped), plus a ``free_bytes`` probe before and after
evicting when ``min_free_space`` is set.  Thread model: every method takes ``lock`` (an ``RLock`` the
owner may share); unlinks and ``on_evict`` run with it held, so the callback must be quick and must not
wait for another thread that needs the lock.  Invariants, the compact entries of pages adopted at
start-up, and the decisions where the clauses leave room: docs/ARCHITECTURE.md, "Design notes".
"""

from __future__ import annotations

import _thread
import errno
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from hicache._validate import check_int, shown
from hicache.fs import FileStat, FileSystem

__all__ = ["MAX_BYTES", "RETRY_UNREMOVABLE_AFTER", "EvictorEntry", "LRUFileEvictor", "check_bytes_limit"]

logger = logging.getLogger(__name__)

MAX_BYTES = 2**63 - 1  # the largest file offset (off_t); a cap or floor above it is a mistake
# S7: seconds an unremovable victim rests before eviction tries (and logs) it again.  Long enough that
# a storm of refused writes costs one failed unlink per file, short enough that a file healed by hand
# (chattr -i, a busy reader gone) is evicted within the minute.
RETRY_UNREMOVABLE_AFTER = 30.0


def check_bytes_limit(name: str, size: int, given: object = None) -> int:
    """Return ``size`` when it is at most ``MAX_BYTES``, else raise a ValueError naming ``name`` (B1).

    The ValueError shows the value as given (``given``, or ``size`` itself).  Above ``MAX_BYTES`` the
    cap's float ratio math would overflow.
    """
    if size > MAX_BYTES:
        raise ValueError(
            f"{name} must be at most 2**63 - 1 bytes, got {shown(size if given is None else given)}"
        )
    return size


class EvictorEntry(NamedTuple):
    """One tracked file, as :meth:`LRUFileEvictor.snapshot` reports it."""

    key: str
    size: int
    in_flight: bool


class _Overlaps:
    """The two marks that tell a probe what overlapped it (C1, F4, C5), read before its filesystem call.

    ``removals`` guards beliefs (C1): even while no removal is under way; made odd when one starts (an
    eviction pass before its first victim's ``on_evict``, a ``delete``, a ``clear``) and even again after
    its last unlink.  A probe that found a file teaches its belief only if ``removal_overlapped(mark)`` is
    False for the ``removals`` it read: no removal was under way when it began and none started since.

    ``publications`` guards entries (F4, C5): it grows with every commit and adoption, and each entry keeps
    the value it got (``seen``).  A probe that found no file forgets the key only if the entry was not
    published after the ``publications`` it read: a miss older than the file must not untrack it.

    Changed under the owner's lock; a probe reads both without it (one int read is atomic).
    """

    __slots__ = ("publications", "removals")

    def __init__(self) -> None:
        self.removals = 0
        self.publications = 0

    @property
    def removing(self) -> bool:
        """A removal is under way (``removals`` is odd)."""
        return self.removals % 2 == 1

    def start_removal(self) -> None:
        if not self.removing:
            self.removals += 1

    def end_removal(self) -> None:
        if self.removing:
            self.removals += 1

    def removal_overlapped(self, mark: int) -> bool:
        """Return True when a removal was under way at ``mark`` (odd) or has started since (moved)."""
        return mark % 2 == 1 or self.removals != mark

    def publish(self) -> int:
        """Count a new publication and return it: the ``seen`` of the entry just committed or adopted."""
        self.publications += 1
        return self.publications


class _Entry:
    __slots__ = ("published", "resting_until", "seen", "size", "writers")

    def __init__(self, size: int, writers: int, seen: int = 0) -> None:
        self.size = size
        self.writers = writers  # writes in flight (reserved, neither committed nor aborted)
        self.published = False  # while in flight: one of its writes has committed (the file is on disk)
        self.seen = seen  # _overlaps.publications when last committed or adopted
        self.resting_until: float | None = None  # S7: its unlink failed; not retried before this time

    @property
    def in_flight(self) -> bool:
        return self.writers > 0


def _size(entry: _Entry | int) -> int:
    return entry if isinstance(entry, int) else entry.size


def _in_flight(entry: _Entry | int) -> bool:
    return not isinstance(entry, int) and entry.writers > 0


class LRUFileEvictor:
    """Size accounting in LRU order, evicting files to make room for writes (V1-V6).

    ``path_of(key)`` names a key's file; ``directory`` is probed for free space.
    ``max_size`` (bytes, 0 = no cap), ``min_free_space`` (bytes, 0 = no floor),
    ``eviction_ratio`` in (0, 1]: eviction for the cap goes down to
    ``floor(max_size * eviction_ratio)`` so that it does not run on every write.
    ``on_evict(key)`` is called once per victim, before its unlink (V6).
    ``accept(stat)``: whether a file found by ``touch`` may be adopted (S3: only the owner's pages).

    Raises ``TypeError``/``ValueError`` naming the parameter on bad input (B1).

    >>> import os, tempfile
    >>> from hicache.fs import OSFileSystem
    >>> fs = OSFileSystem()
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for key in "ab":
    ...         fs.write_new(os.path.join(d, key), memoryview(b"12345"))
    ...     ev = LRUFileEvictor(
    ...         fs, lambda k: os.path.join(d, k), directory=d, max_size=12, eviction_ratio=1.0
    ...     )
    ...     print(ev.touch("a"), ev.touch("b"), ev.total)  # adopted with their sizes on disk
    ...     print(ev.reserve("c", 5), [e.key for e in ev.snapshot()], ev.total, sorted(os.listdir(d)))
    True True 10
    True ['b', 'c'] 10 ['b']
    """

    def __init__(
        self,
        fs: FileSystem,
        path_of: Callable[[str], str],
        *,
        directory: str,
        max_size: int = 0,
        min_free_space: int = 0,
        eviction_ratio: float = 0.9,
        on_evict: Callable[[str], object] | None = None,
        # _thread.RLock is the class; threading.RLock is a factory function, which pdoc cannot evaluate
        lock: _thread.RLock | None = None,
        accept: Callable[[FileStat], bool] | None = None,
    ) -> None:
        self._max_size = check_bytes_limit("max_size", check_int("max_size", max_size, minimum=0) or 0)
        self._min_free = check_bytes_limit(
            "min_free_space", check_int("min_free_space", min_free_space, minimum=0) or 0
        )
        if isinstance(eviction_ratio, bool) or not isinstance(eviction_ratio, (int, float)):
            raise TypeError(
                f"eviction_ratio must be a number, got {type(eviction_ratio).__name__} {eviction_ratio!r}"
            )
        if not (0 < eviction_ratio <= 1):
            raise ValueError(f"eviction_ratio must be in (0, 1], got {eviction_ratio!r}")
        if not callable(path_of):
            raise TypeError(f"path_of must be callable, got {type(path_of).__name__} {path_of!r}")
        if accept is not None and not callable(accept):
            raise TypeError(f"accept must be callable or None, got {type(accept).__name__} {accept!r}")
        if on_evict is not None and not callable(on_evict):
            raise TypeError(f"on_evict must be callable or None, got {type(on_evict).__name__} {on_evict!r}")
        self._ratio = float(eviction_ratio)
        self._fs = fs
        self._path_of = path_of
        self._directory = directory
        self._on_evict = on_evict
        self._accept = accept
        self._lock: _thread.RLock = lock if lock is not None else threading.RLock()
        self._entries: OrderedDict[str, _Entry | int] = OrderedDict()  # an int: a compact entry
        self._total = 0
        self._bulk_seen = 0  # the ``seen`` of every compact entry (the publication of adopt_many)
        self._overlaps = _Overlaps()
        self._walk_now: float | None = None  # S7: the port's now(), read at most once per pass (lock held)

    @property
    def enabled(self) -> bool:
        """V1: eviction is on when there is a cap or a free-space floor."""
        return self._max_size > 0 or self._min_free > 0

    @property
    def max_size(self) -> int:
        """The cap on the bytes of the tracked files; 0 is no cap (V1, V3)."""
        return self._max_size

    @property
    def min_free_space(self) -> int:
        """The floor of free bytes on the filesystem that eviction keeps; 0 is no floor (V1, V3)."""
        return self._min_free

    @property
    def eviction_ratio(self) -> float:
        """The fraction of the cap (or of the bytes held, S8) that an eviction pass frees down to (V3)."""
        return self._ratio

    @property
    def total(self) -> int:
        """Bytes of every tracked entry, in flight included (V2)."""
        with self._lock:
            return self._total

    def __len__(self) -> int:
        """Return the number of tracked entries, in flight included.  O(1)."""
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Tell whether ``key`` has an entry (committed or in flight).  O(1)."""
        with self._lock:
            return key in self._entries

    @property
    def overlaps(self) -> _Overlaps:
        """The marks an owner's probe reads before its filesystem call (see ``_Overlaps``).

        Eviction opens and closes a removal there itself; the owner opens and closes its own (delete,
        clear).
        """
        return self._overlaps

    def forget_missing(self, key: str, since: int) -> bool:
        """Drop ``key``'s committed entry, found missing by a probe, unless it was published since (F4, C5).

        The probe read ``publications`` ``since``; the entry's bytes are given back, unless it was
        committed or adopted after ``since`` (the miss is older than that file, C5).  True when the miss
        stands (the owner forgets the belief).  O(1).

        An in-flight entry is left alone (its write is still running).
        """
        with self._lock:
            entry = self._entry(key)
            if entry is None:
                return True
            if entry.seen > since:
                return False
            if not entry.in_flight:
                del self._entries[key]
                self._total -= entry.size
            return True

    def reserve(self, key: str, size: int) -> bool:
        """Admit a write of ``size`` bytes for ``key``, evicting LRU files as needed (V3, V5).

        On success ``key`` is most recently used, in flight, counted with
        ``size``.  Refused (False): larger than the cap, or no room could be
        made.  A key in flight already counts one more writer (C5).  O(1) plus
        the victims tried.
        """
        check_int("size", size, minimum=0)
        with self._lock:
            old = self._entry(key)
            others = self._total - (old.size if old is not None else 0)
            room = not self.enabled or self._make_room(key, size, others)
            self._overlaps.end_removal()  # the evictions made for it, if any, are over
            if not room:
                return False
            entry = _Entry(size, 1)
            if old is not None:
                self._total -= old.size
                del self._entries[key]
                entry.seen = old.seen
                if old.in_flight:  # another write of the key is still running: both are in flight
                    entry.writers, entry.published = old.writers + 1, old.published
            self._entries[key] = entry
            self._total += size
            return True

    def evict(self) -> bool:
        """Enforce the limits now (start-up, F8): as ``reserve`` of nothing.  True when they hold."""
        with self._lock:
            room = not self.enabled or self._make_room(None, 0, self._total)
            self._overlaps.end_removal()
            return room

    def relieve(self, key: str, size: int) -> bool:
        """S8: a write of ``size`` bytes for ``key`` met ``ENOSPC``: evict as for a cap at the bytes held now.

        Evicts LRU entries (never ``key``, a write in flight or a resting file) until the others fit
        under ``floor(others * eviction_ratio) - size``.  True when at least one entry was evicted (a
        retry may now fit); False when nothing could be, or when eviction is off (V1).  O(victims +
        entries skipped).
        """
        check_int("size", size, minimum=0)
        with self._lock:
            if not self.enabled:
                return False
            entry = self._entry(key)
            others = self._total - (entry.size if entry is not None else 0)
            if others <= 0:
                return False  # nothing else holds a byte: no eviction can make room
            target = math.floor(others * self._ratio) - size
            self._walk_now = None
            evicted = self._evict_while(key, lambda freed: others - freed > target)[1]
            self._overlaps.end_removal()
            return evicted > 0

    def commit(self, key: str, size: int | None = None) -> None:
        """V4: the write of ``key`` is on disk; it may now be evicted, and is most recently used.  O(1).

        Recency counts from publication, not reservation: a write that was
        reserved first but published last is the newest file (C5).  While
        another write of the key is in flight the entry stays in flight (V5).
        An entry that vanished is re-adopted when ``size`` (the bytes just
        published) is given: the file is on disk, so it is counted (C3).
        """
        if size is not None:
            check_int("size", size, minimum=0)
        with self._lock:
            seen = self._overlaps.publish()
            entry = self._entry(key)
            if entry is None:
                if size is None:
                    return
                entry = self._entries[key] = _Entry(size, 0)
                self._total += size
            elif entry.writers > 0:
                entry.writers -= 1
                entry.published = entry.writers > 0
            entry.seen = seen
            self._entries.move_to_end(key)

    def abort(self, key: str) -> None:
        """V4: the write of ``key`` failed: drop its entry and give its bytes back.  O(1).

        With another write of the key still in flight the entry stays (one
        writer fewer); once the last one ends, the entry stays, committed, if
        one of them published the file (C5).
        """
        with self._lock:
            entry = self._entry(key)
            if entry is None:
                return
            if entry.writers > 1:
                entry.writers -= 1
                return
            if entry.writers == 1 and entry.published:
                entry.writers, entry.published = 0, False
                return
            del self._entries[key]
            self._total -= entry.size

    def touch(self, key: str, size: int | None = None) -> bool:
        """V4: make ``key`` most recently used; adopt an untracked file with its real size.

        The real size is ``size`` when the caller knows it, else one ``stat``.
        False when the key is untracked and its file is missing or unreadable.
        """
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return True
            if size is None:
                try:
                    st = self._fs.stat(self._path_of(key))
                except OSError as exc:
                    # ENOENT: nothing to adopt; any other errno: adopt nothing rather than guess a size.
                    if exc.errno != errno.ENOENT:
                        logger.warning("file evictor: cannot stat %r to adopt it: %s", key, exc)
                    return False
                if self._accept is not None and not self._accept(st):
                    return False  # S3: a symlink, FIFO, directory or another user's file is never adopted
                size = st.size
            self._entries[key] = _Entry(size, 0, self._overlaps.publish())
            self._total += size
            return True

    def adopt_many(self, found: Iterable[tuple[str, int]], total: int | None = None) -> None:
        """Adopt every (key, size) of ``found`` not tracked yet, in order, as most recently used (F8).

        One publication for them all; held compactly (see docs/ARCHITECTURE.md: the caller may give one
        int object per distinct size).  A key tracked already is only made most recently used.  No ``stat``:
        the sizes come from the caller's listing.  ``total``: the sum of the sizes, when the caller knows it
        and the keys are distinct (a start-up listing); the adoption then runs in C when nothing is tracked
        yet.  O(len).
        """
        with self._lock:
            self._bulk_seen = self._overlaps.publish()
            entries = self._entries
            if not entries and total is not None:
                entries.update(found)
                self._total = total
                return
            move, added = entries.move_to_end, 0
            for key, size in found:
                if key in entries:
                    move(key)
                    continue
                entries[key] = size
                added += size
            self._total += added

    def adopt_least_recent(self, found: Sequence[tuple[str, int]]) -> list[str]:
        """Adopt every (key, size) of ``found`` not tracked yet as the least recently used entries (F8-bg).

        They go in the order given (its first is then the least recently used of all), before every entry
        tracked so far.  Held compactly, with the publication of the last ``adopt_many`` (a background scan
        calls ``adopt_many(())`` once, when its listing begins: the pages it adopts are as old as that).
        A key tracked already keeps its entry and its place.  No ``stat``.  Answers the keys adopted, in
        order.  O(len).
        """
        with self._lock:
            entries = self._entries
            move = entries.move_to_end
            adopted: list[str] = []
            added = 0
            for key, size in reversed(found):
                if key in entries:
                    continue
                entries[key] = size
                move(key, last=False)
                adopted.append(key)
                added += size
            self._total += added
            adopted.reverse()
            return adopted

    def discard(self, key: str) -> bool:
        """Drop the committed entry of a file that is gone, giving its bytes back (F4).  O(1).

        An in-flight entry is left alone (its write is still running).  True if dropped.
        """
        with self._lock:
            entry = self._entry(key)
            if entry is None or entry.in_flight:
                return False
            del self._entries[key]
            self._total -= entry.size
            return True

    def clear(self) -> None:
        """Forget every committed entry (the owner removed the files; ``on_evict`` is not called).

        Writes in flight keep their entries: they publish after the clear and
        will be committed or aborted by their writers.  O(n).
        """
        with self._lock:
            kept = [(key, entry) for key, entry in self._entries.items() if _in_flight(entry)]
            self._entries = OrderedDict(kept)
            self._total = sum(_size(entry) for _key, entry in kept)

    def snapshot(self) -> tuple[EvictorEntry, ...]:
        """Return the entries, least recently used first (introspection for tests).  O(n)."""
        with self._lock:
            return tuple(EvictorEntry(k, _size(e), _in_flight(e)) for k, e in self._entries.items())

    def check_invariants(self) -> None:
        """Assert C3 for the evictor: the total is the sum of the tracked sizes.  O(n)."""
        with self._lock:
            assert self._total == sum(map(_size, self._entries.values())), "total != sum of sizes"
            assert all(_size(e) >= 0 for e in self._entries.values()), "negative size"
            full = [e for e in self._entries.values() if isinstance(e, _Entry)]
            assert all(e.writers >= 0 for e in full), "negative writers"
            assert not any(e.published and not e.writers for e in full), "published, idle"
            last = self._overlaps.publications
            assert all(e.seen <= last for e in full), "seen after the last commit"
            assert self._bulk_seen <= last, "bulk seen after the last commit"

    # -- internals -----------------------------------------------------------

    def _entry(self, key: str) -> _Entry | None:
        """Return ``key``'s entry (None when untracked), as an ``_Entry`` the caller may change (lock held).

        A compact one becomes an ``_Entry`` in place first.
        """
        entry = self._entries.get(key)
        if isinstance(entry, int):
            entry = self._entries[key] = _Entry(entry, 0, self._bulk_seen)
        return entry

    def _make_room(self, key: str | None, size: int, others: int) -> bool:
        """Evict for the cap, then for the free-space floor; True when ``size`` more bytes fit (lock held).

        S7: each pass walks the LRU order from its oldest entry and stops as soon as the room is made,
        so it costs O(victims + entries skipped), never a copy or a scan of the whole order.
        """
        self._walk_now = None
        cap = self._max_size
        if cap > 0:
            if size > cap:
                return False
            if others + size > cap:
                target = math.floor(cap * self._ratio) - size
                start = others
                others -= self._evict_while(key, lambda freed: start - freed > target)[0]
                if others + size > cap:
                    return False
        floor = self._min_free
        if floor > 0:
            free = self._free_bytes()
            if free is None:
                return False
            if free - size < floor:
                probed = free  # the estimate grows by each victim's size; re-probed below
                self._evict_while(key, lambda freed: probed + freed - size < floor)
                free = self._free_bytes()
                if free is None or free - size < floor:
                    return False
        return True

    def _evict_while(self, keep: str | None, more: Callable[[int], bool]) -> tuple[int, int]:
        """Evict LRU entries while ``more(bytes freed so far)``; answer (bytes freed, entries evicted).

        The lock is held.

        The walk does not change ``_entries`` while it iterates (the victims' entries are dropped after
        it), so no copy of the order is needed.  Writes in flight, ``keep``, resting files and files
        that cannot be removed are skipped and keep their position (V5, S7).
        """
        freed = 0
        gone: list[str] = []
        for victim in self._entries:
            if not more(freed):
                break
            size = self._evict_one(victim, keep)
            if size is not None:
                gone.append(victim)
                freed += size
        for victim in gone:
            self._total -= _size(self._entries.pop(victim))
        return freed, len(gone)

    def _now(self) -> float:
        """Return the port's clock, read at most once per pass, and only when a victim fails or rests (S7)."""
        if self._walk_now is None:
            self._walk_now = self._fs.now()
        return self._walk_now

    def _evict_one(self, victim: str, keep: str | None) -> int | None:
        """Try to remove one victim's file: its size when the file is gone, None when skipped (lock held).

        ``on_evict`` first, then the unlink (V5, V6).  The entry itself is left in place: the caller
        drops it after its walk.  A resting entry (S7) is skipped untouched; a failed unlink starts its rest.
        """
        entry = self._entry(victim)
        if entry is None or entry.in_flight or victim == keep:
            return None
        until = entry.resting_until
        if until is not None:
            now = self._now()
            if until - RETRY_UNREMOVABLE_AFTER <= now < until:
                return None  # S7: failed less than a back-off ago: not retried, not logged again
            entry.resting_until = None
        self._overlaps.start_removal()  # before any belief goes (C1); the pass ends it
        if self._on_evict is not None:
            self._on_evict(victim)  # before the unlink: no belief outlives its file (V6)
        try:
            self._fs.unlink(self._path_of(victim))
        except FileNotFoundError:
            pass  # already gone (another process, or by hand): counts as evicted (V5)
        except OSError as exc:
            # EPERM/EACCES/EBUSY/EISDIR/EROFS/EIO...: the file stays; skip it, go on (V5), and let it rest
            # (S7): this line is logged once per back-off, not once per write that reaches the file.
            entry.resting_until = self._now() + RETRY_UNREMOVABLE_AFTER
            logger.warning(
                "file evictor: cannot remove %r, skipping it for %g s: %s",
                victim,
                RETRY_UNREMOVABLE_AFTER,
                exc,
            )
            return None
        return entry.size

    def _free_bytes(self) -> int | None:
        try:
            return self._fs.free_bytes(self._directory)
        except OSError as exc:
            # Any errno: without a probe the floor cannot be honoured, so the write is refused.
            logger.warning("file evictor: cannot probe free space of %r: %s", self._directory, exc)
            return None
