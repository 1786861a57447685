"""FileKnowledge: what a HiCacheFile believes and counts (docs/SEMANTICS.md C1, F4).

The store's beliefs (a :class:`~hicache.metadata_cache.MetadataCache`, or None) and its accounting (an
:class:`~hicache.file_evictor.LRUFileEvictor`) are taught only here, by the probes of keys' files
(``look``, ``probe``, ``read``) and by the removals, under the two guards of docs/ARCHITECTURE.md:

* C1: a probe reads the ``removals`` mark before its filesystem call; a removal overlapping it (one
  opened with ``removal()``, or an eviction) keeps it from teaching a belief or adopting a file.
* F4: a probe reads the ``publications`` mark before its call; a miss older than a write committed since
  forgets nothing (C3, C5).

A variant that learns or forgets differently is a subclass set as the store's ``knowledge_class``.

Complexity: each method O(1) but ``learn_many`` O(lessons) and ``readopt`` O(kept).  Thread model: any
thread; the store's lock (shared with the evictor) serializes accounting, removals and belief teaching.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from hicache.file_evictor import LRUFileEvictor
from hicache.file_layout import FileLayout
from hicache.file_trust import FileTrust
from hicache.fs import FileStat, FileTooLargeError, NotAPageError
from hicache.metadata_cache import MetadataCache

__all__ = ["FileKnowledge"]

logger = logging.getLogger("hicache.file_store")  # the store's log: its collaborators speak for it

_T = TypeVar("_T")
Look = tuple[_T | None, bool, int, int]  # (result or None, missing or not a page, removals, publications)


class FileKnowledge:
    """The beliefs and accounting of one store, over ``layout`` and ``trust``, taught under ``lock``.

    ``note_gone`` tells the background scan (F8-bg) a key this store removed or found missing.
    """

    def __init__(
        self,
        layout: FileLayout,
        trust: FileTrust,
        *,
        evictor: LRUFileEvictor,
        beliefs: MetadataCache | None,
        lock: threading.RLock,
        note_gone: Callable[[str], None],
        max_value_size: int,
    ) -> None:
        self._layout = layout
        self._trust = trust
        self._fs = layout.fs
        self.evictor = evictor
        self.beliefs = beliefs
        self.lock = lock
        self.overlaps = evictor.overlaps  # the removals and publications a probe reads (C1, F4)
        self.note_gone = note_gone
        self._max_value_size = max_value_size

    def snapshot(self) -> tuple[tuple[Hashable, float], ...]:
        """Return the live beliefs with their births, in eviction order, changing nothing.  O(beliefs)."""
        return () if self.beliefs is None else self.beliefs.snapshot()

    def check_invariants(self) -> None:
        """Assert the invariants of the accounting and the beliefs, and that no removal is half done."""
        self.evictor.check_invariants()
        if self.beliefs is not None:
            self.beliefs.check_invariants()
        with self.lock:
            assert not self.overlaps.removing, "a removal was left half done"

    @contextmanager
    def removal(self) -> Iterator[None]:
        """Hold the lock with a removal open (C1, F4): no probe overlapping it teaches what it saw."""
        with self.lock:
            self.overlaps.start_removal()
            try:
                yield
            finally:
                self.overlaps.end_removal()

    def believes(self, key: str) -> bool:
        """Tell whether ``key`` has a live belief (F6: no filesystem call)."""
        beliefs = self.beliefs
        return beliefs is not None and beliefs.contains(key)

    def refresh(self, key: str) -> bool:
        """Refresh a believed ``key``'s recency; False when it is not believed (any more)."""
        beliefs = self.beliefs
        if beliefs is not None and beliefs.contains(key):
            with self.lock:
                if beliefs.contains(key):  # still: no removal slipped in
                    self.evictor.touch(key)
                    return True
        return False

    def reserve(self, key: str, size: int) -> bool:
        """Reserve ``size`` bytes for a write of ``key``, evicting as the limits require; False: no room."""
        with self.lock:
            return self.evictor.reserve(key, size)  # ends the removal its evictions opened

    def settle(self, key: str, size: int, removals: int | None, path: str) -> None:
        """Account for a write of ``key`` that published ``size`` bytes at ``path`` (``removals``: its mark).

        ``removals`` None: nothing was published, the reservation goes.
        """
        beliefs = self.beliefs
        with self.lock:
            if removals is None:
                self.evictor.abort(key)
                if beliefs is not None:
                    beliefs.remove(key)
            else:
                self.evictor.commit(key, size)  # the size re-adopts the entry if it vanished (C3)
                if not self.overlaps.removal_overlapped(removals):
                    if beliefs is not None:
                        beliefs.add(key)
                elif self.gone(path):
                    # A delete or clear overlapped the write and removed the file it published (it
                    # linearizes after this set): no entry may outlive the file, unless another write of
                    # it is in flight.
                    self.evictor.discard(key)

    def look(self, key: str, verb: str, call: Callable[..., _T], *args: Any) -> Look[_T]:
        """Make one filesystem call, ``call(path, *args)``, on a checked key's file, as every probe does.

        Answers (its result, or None; whether the file is missing or not a page of ours; the ``removals``
        and ``publications`` marks read before the call, for ``observe``).  Teaches nothing: the caller,
        which may refuse the result (a short read), teaches with ``observe``.
        """
        path = self._layout.path(key)
        overlaps = self.overlaps
        removals, published = overlaps.removals, overlaps.publications
        try:
            return call(path, *args), False, removals, published
        except OSError as exc:
            return None, _missing(path, verb, exc), removals, published

    def read(self, key: str) -> Look[bytes]:
        """Read a checked key once, as ``look`` answers (the value, or None); a short read is None.

        Teaches nothing.
        """
        fs, limit, is_page = self._fs, self._max_value_size, self._trust.is_page
        try:
            got, missing, removals, published = self.look(key, "read", fs.read_file, limit, is_page)
        except MemoryError:
            # S4: within max_value_size but more than this process can hold now: an answer, not a raise.
            logger.warning("file store: %r not read: out of memory", self._layout.path(key))
            return None, False, 0, 0
        if got is None:
            return None, missing, removals, published
        size, data = got
        if len(data) != size:
            logger.warning(
                "file store: short read of %r: %d of %d bytes", self._layout.path(key), len(data), size
            )
            return None, False, removals, published
        return data, False, removals, published

    def read_whole(self, key: str, view: memoryview) -> bool:
        """Read a checked key once into ``view`` and teach what was seen: True only when it filled it (F4).

        ``look`` and ``observe`` for the hottest call, written out.  A file of another size is not read.
        """
        path = self._layout.path(key)
        overlaps = self.overlaps
        removals, published = overlaps.removals, overlaps.publications
        try:
            size, read = self._fs.read_into(path, view, self._max_value_size, self._trust.is_page)
        except OSError as exc:
            if _missing(path, "read", exc):
                self.observe(key, False, True, removals, published, None)
            return False
        if size == len(view) and read == size:
            self.learn(key, removals, size)  # what ``observe`` teaches of a page found
            return True
        if size != len(view):
            logger.warning("file store: %r holds %d bytes, the buffer %d: not read", path, size, len(view))
        else:
            logger.warning("file store: short read of %r: %d of %d bytes", path, read, size)
        return False

    def probe(self, key: str, *, touch: bool) -> FileStat | None:
        """One ``stat``: the node's stat (teaching the belief, C1-guarded) or None when missing/unreadable.

        A node that is not a page (S3) is answered as found but teaches nothing: its belief and its
        entry go, as for a missing file, since nothing of this store is on disk under that name.
        """
        st, missing, removals, published = self.look(key, "stat", self._fs.stat)
        size = None if st is None or not touch else st.size
        page = st is not None and self._trust.is_page(st)
        missing = missing or (st is not None and not page)  # S3: nothing of ours under the name
        self.observe(key, page, missing, removals, published, size, touch=touch)
        return st

    def on_disk(self, key: str) -> bool:
        """One ``stat`` of a checked key: True when a page of ours is there (teaching it, C1-guarded)."""
        st = self.probe(key, touch=False)
        return st is not None and self._trust.is_page(st)

    def gone(self, path: str) -> bool:
        """One ``stat``: True only when the file is certainly missing (any other errno: unknown, False)."""
        try:
            self._fs.stat(path)
        except FileNotFoundError:
            return True
        except OSError as exc:
            # EIO, EACCES, ESTALE...: existence unknown; the entry stays (over-counting is the safe side).
            logger.warning("file store: cannot stat %r: %s", path, exc)
        return False

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
        """Teach what one look at ``key``'s file saw (``look``'s marks).

        A page ``found`` refreshes its recency and teaches its belief (C1-guarded, ``learn``); a
        ``missing`` file is forgotten, belief and entry, unless it was published since (F4, C5); anything
        else teaches nothing.
        """
        if missing:
            self.forget_missing(key, published)
        elif found:
            self.learn(key, removals, size, touch=touch)

    def learn(self, key: str, removals: int, size: int | None, *, touch: bool = True) -> None:
        """Refresh the recency of ``key``, which a probe found, and teach its belief, as C1 allows.

        If a removal overlapped the probe (the epoch was odd or has moved), the
        file it saw may be gone: no belief is taught and no untracked file is
        adopted, but a key still tracked is refreshed (the probe linearizes
        before the removal, which either removed the key or left it alone).
        """
        with self.lock:
            if self.overlaps.removal_overlapped(removals):
                if touch and key in self.evictor:
                    self.evictor.touch(key)
                return
            if touch:
                self.evictor.touch(key, size)
            if self.beliefs is not None:
                self.beliefs.add(key)

    def learn_many(self, lessons: list[tuple[str, int, int]]) -> None:
        """Apply ``learn`` to each (key, removals mark, size) in order, under one acquisition of the lock.

        The beliefs are taught in one ``add_many`` (M9).
        """
        if not lessons:
            return
        with self.lock:
            taught = []
            evictor = self.evictor
            overlapped = self.overlaps.removal_overlapped
            for key, removals, size in lessons:
                if overlapped(removals):
                    if key in evictor:
                        evictor.touch(key)
                    continue
                evictor.touch(key, size)
                taught.append(key)
            if self.beliefs is not None and taught:
                self.beliefs.add_many(taught)

    def forget_missing(self, key: str, published: int) -> None:
        """F4: the file is gone: drop the belief and give its bytes back to the accounting.

        Unless a write of ``key`` was committed since the probe read ``published``:
        the miss is older than that file, which stays believed and tracked (C3, C5).
        """
        with self.lock:
            self.note_gone(key)
            if self.evictor.forget_missing(key, published) and self.beliefs is not None:
                self.beliefs.remove(key)

    def forget_all(self) -> None:
        """Drop every belief (inside a ``removal()``: ``clear``)."""
        if self.beliefs is not None:
            self.beliefs.clear()

    def forget(self, key: str) -> None:
        """Drop ``key``'s belief before its file is removed (inside a ``removal()``)."""
        if self.beliefs is not None:
            self.beliefs.remove(key)

    def removed(self, key: str) -> None:
        """Account for ``key``'s file, removed by this store (inside a ``removal()``)."""
        self.note_gone(key)
        self.evictor.discard(key)

    def readopt(self, kept: list[tuple[float, str, int]]) -> None:
        """Reset the accounting to the pages a ``clear`` could not remove, (mtime, key, size) each.

        They are adopted again oldest first, ties in the listing's order, as start-up seeds pages (F8,
        V2); inside a ``removal()``.
        """
        self.evictor.clear()
        kept.sort(key=lambda page: page[0])
        for _mtime, key, size in kept:
            self.evictor.touch(key, size)


def _missing(path: str, verb: str, exc: OSError) -> bool:
    """Log a failed look at ``path``; True when its file is missing or not a page of ours (S3)."""
    if isinstance(exc, FileNotFoundError):
        return True
    if isinstance(exc, NotAPageError):
        logger.warning("file store: %r is not a page of this store, not read: %s", path, exc.strerror)
        return True
    if isinstance(exc, FileTooLargeError):
        # S4: refused before allocating; the file and its accounting stay (it is a page of ours).
        logger.warning("file store: %r not read: %s (max_value_size)", path, exc.strerror)
    else:
        # EIO, EACCES, ESTALE...: unavailable, or existence unknown (answered as absent, the
        # conservative answer); the file and its accounting stay.
        logger.warning("file store: cannot %s %r: %s", verb, path, exc)
    return False
