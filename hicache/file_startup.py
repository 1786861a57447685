"""FileStartup: how a HiCacheFile learns what its directory holds (docs/SEMANTICS.md F8).

Start-up lists the directory once (with ``fanout``, the two levels of subdirectories, F1-fanout), removes
its old temp files (S6), and adopts every page of the namespace (S3) into the accounting, oldest first,
each believed; then the limits are enforced.  Blocking (``start``), or in the background (``begin``, then
``step`` a batch at a time on a daemon thread, F8-bg), during which the keys this store removes or finds
missing are noted gone (``note_gone``), so that the stale listing never adopts them again.

A variant that starts up differently is a subclass set as the store's ``startup_class`` class attribute.

Complexity: O(entries) for the listing, read a chunk at a time: the naming's ``keys_of`` and the trust's
``are_pages`` of each chunk (the inner loop, docs/SEMANTICS.md "F8 at scale"), and one sort of the pages by
mtime.  Thread
model: ``start`` runs in the constructor; the background scan's thread and the store's callers meet under
the store's lock, which guards the accounting, the beliefs and the keys noted gone.
"""

from __future__ import annotations

import logging
import os
import threading
from array import array
from collections.abc import Callable, Generator, Iterable, Iterator, MutableSet, Sequence
from itertools import chain, compress, islice, repeat
from operator import and_, is_not, itemgetter
from typing import TypeVar

from hicache.file_evictor import LRUFileEvictor
from hicache.file_layout import FileLayout, fanout_dirs, is_fanout_dir_name, is_temp_name
from hicache.file_trust import FileTrust
from hicache.fs import DirEntry
from hicache.metadata_cache import MetadataCache

__all__ = ["FileStartup"]

logger = logging.getLogger("hicache.file_store")  # the store's log: its collaborators speak for it

_T = TypeVar("_T")
_CHUNK = 1024  # listing entries the scan reads at a time
_name, _size, _mtime = itemgetter(0), itemgetter(1), itemgetter(2)  # a DirEntry's fields


class FileStartup:
    """The start-up scan of one store: over ``layout`` (with its ``trust``), into its evictor and ``beliefs``.

    ``lock`` is the store's (shared with its evictor); ``temp_max_age`` the age in seconds from which a
    temp file is stale; ``batch`` the listing entries per background batch; ``thread`` False: no thread,
    the caller runs ``step`` (a test's store).
    """

    def __init__(
        self,
        layout: FileLayout,
        trust: FileTrust,
        *,
        beliefs: MetadataCache | None,
        lock: threading.RLock,
        temp_max_age: float,
        batch: int,
        thread: bool,
    ) -> None:
        self._layout = layout
        self._trust = trust
        self._fs = layout.fs
        self._directory = layout.directory
        self._namespace = layout.naming.namespace
        self.evictor: LRUFileEvictor  # set by the store once made: its on_evict may call note_gone
        self._beliefs = beliefs
        self._lock = lock
        self._temp_max_age = temp_max_age
        self.batch = batch
        self.thread = thread
        # F8-bg: the keys whose files this store removed or found missing since its background scan
        # began (None: no scan under way); the scan's state; set once start-up is complete.
        self._gone: MutableSet[str] | None = None
        self._scanning: _Scan | None = None
        self.started = threading.Event()

    def note_gone(self, key: str) -> None:
        """Note ``key`` gone while a background scan runs: this store removed its file or found it missing.

        The scan never adopts it from its (older) listing (F8-bg; the store's lock held).
        """
        gone = self._gone
        if gone is not None:
            gone.add(key)

    def close(self) -> None:
        """Stop the background scan after the batch under way and wait for its thread (F8-bg)."""
        scan = self._scanning
        if scan is None:
            return
        scan.stop = True
        thread = scan.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._end(scan)

    def start(self) -> None:
        """F8: remove stale temp files, seed accounting and beliefs, evict (the directory is made: S1).

        The listing is streamed, never held: each page found leaves its key (kept: it is the evictor's
        key), its size (one int object per distinct size) and its modification time in parallel arrays,
        and the order oldest first (ties in the listing's order, F8) is a list of indices, dropped once
        the keys and sizes are put in that order, so the peak is the evictor's own entries plus under
        100 bytes a page while they are built (docs/SEMANTICS.md F8).  With ``fanout`` (F1-fanout) the
        two levels of subdirectories are walked, each checked as it is met.
        """
        found = _Found()
        now = self._fs.now()
        top = self._fs.scandir(self._directory)
        if self._layout.fanout:
            self._scan_fanout(top, found, now)
        elif self._scan(self._directory, top, found, now, None):
            raise self._layout.fanout_marker_met()
        self._warn_skipped(found.skipped)
        in_order = _gather(_oldest_first(found.mtimes))
        keys, sizes = in_order(found.keys), in_order(found.sizes)
        del in_order
        with self._lock:
            self.evictor.adopt_many(zip(keys, sizes, strict=True), sum(sizes))
            del keys, sizes
            if self._beliefs is not None:
                # All born now, so in the listing's order: the keys' objects are met in the order they
                # were made (at a million pages, far apart in memory in any other order).
                self._beliefs.add_many(found.keys)
            del found
            if not self.evictor.evict():  # ends the removal its evictions opened
                logger.warning(
                    "file store: %r is over its limits; nothing more can be evicted", self._directory
                )

    def _warn_skipped(self, skipped: dict[str, int]) -> None:
        for kind, count in sorted(skipped.items()):
            # S3: one line per kind, never one per node.
            logger.warning(
                "file store: %d %s node(s) named like pages of namespace %r in %r: not pages, skipped",
                count,
                kind,
                self._namespace,
                self._directory,
            )

    def begin(self) -> None:
        """Begin the background scan (F8-bg).

        Begin the listing (a directory that cannot be listed raises ``OSError`` here), tell the layouts
        apart (F1-fanout), then leave the rest to ``_scan_step``, on a daemon thread.
        """
        fs, directory = self._fs, self._directory
        now = fs.now()
        listings: Iterator[tuple[str, Iterator[DirEntry] | list[DirEntry], tuple[str, str] | None]]
        if self._layout.fanout:
            listings = self._fanout_leaves(self._fanout_top(fs.scandir(directory), now))
        else:
            self._refuse_a_fanout_marker()
            top = iter(fs.scandir(directory))
            first = next(top, None)  # the listing has begun: opened, its first entry read
            listings = _flat_listings(directory, first, top)
        with self._lock:
            self.evictor.adopt_many(())  # the publication every page the scan adopts is held with (F4)
            self._gone = set()
            self._scanning = scan = _Scan(listings, now)
        if self.thread:
            scan.thread = threading.Thread(
                target=self._in_background, name=f"hicache-scan{self._namespace}", daemon=True
            )
            scan.thread.start()

    def _refuse_a_fanout_marker(self) -> None:
        """Refuse, in a flat store, a directory holding its namespace's fanout marker (F1-fanout, F8-bg).

        One ``stat``: the listing is read later.
        """
        try:
            self._fs.stat(self._layout.marker)
        except FileNotFoundError:
            return
        except OSError as exc:
            # EACCES, EIO...: the marker cannot be looked for; the layouts are not told apart (logged).
            logger.warning("file store: cannot look for the layout marker %r: %s", self._layout.marker, exc)
            return
        raise self._layout.fanout_marker_met()

    def _in_background(self) -> None:
        try:
            while self.step():
                pass
        except Exception:  # a bug, not I/O (which each step answers): the scan ends, the store serves on
            logger.exception(
                "file store: the start-up scan of %r failed; the pages it has not adopted stay unknown"
                " until a probe finds them",
                self._directory,
            )
            scan = self._scanning
            if scan is not None:
                self._end(scan)

    def step(self) -> bool:
        """Run one batch of the background scan (F8-bg).

        Up to ``batch`` entries of the listing are read and their old temp files removed (outside
        the lock), then their pages adopted (``_adopt_scanned``).
        True while the listing has more; False once the scan has ended (this step ended it, or it had).
        """
        scan = self._scanning
        if scan is None or scan.stop:
            return False
        found = _Found()
        want = self.batch
        failed = False
        while want > 0 and not failed:
            if scan.listing is None:
                listing = next(scan.listings, None)
                if listing is None:
                    break
                scan.listing = (listing[0], iter(listing[1]), listing[2])
            where, entries, place = scan.listing
            batch: list[DirEntry] = []
            try:
                for entry in islice(entries, want):
                    batch.append(entry)
            except OSError as exc:
                # EIO, ESTALE...: the listing cannot be read on; what it gave, and what was adopted, stay.
                logger.warning("file store: cannot list %r on; the start-up scan ends: %s", where, exc)
                failed = True
                scan.listings = iter(())
            if failed or len(batch) < want:
                scan.listing = None
            want -= len(batch)
            self._scan(where, batch, found, scan.now, place)
        if failed:
            want = 1
        for kind, count in found.skipped.items():
            scan.skipped[kind] = scan.skipped.get(kind, 0) + count
        self.adopt_scanned(scan, found)
        if want > 0:
            self._end(scan)
            return False
        return True

    def adopt_scanned(self, scan: _Scan, found: _Found) -> None:
        """Adopt a batch's pages as the least recently used entries, oldest first, each believed (F8-bg).

        Ties stay in the listing's order; a key tracked already or noted gone is not adopted; then the
        limits are enforced on what is known (a warning, once, when they cannot be met).
        """
        keys, sizes = found.keys, found.sizes
        order = _oldest_first(found.mtimes)
        with self._lock:
            gone = self._gone
            if gone is None:
                return  # the scan was stopped meanwhile (close)
            pairs = [(keys[i], sizes[i]) for i in order if keys[i] not in gone]
            adopted = self.evictor.adopt_least_recent(pairs)
            if self._beliefs is not None and adopted:
                self._beliefs.add_many(adopted)
            if self.evictor.enabled and not self.evictor.evict() and not scan.warned:
                scan.warned = True
                logger.warning(
                    "file store: %r is over its limits and nothing more of what is known can be evicted;"
                    " the start-up scan goes on (the namespace may exceed the cap by the bytes not scanned)",
                    self._directory,
                )

    def _end(self, scan: _Scan) -> None:
        """End the scan (ended or stopped, F8-bg).

        Nothing more is noted gone, its S3 warnings are logged, start-up is complete.
        """
        with self._lock:
            if self._scanning is not scan:
                return
            self._scanning = None
            self._gone = None
        # A scan stopped midway lets go of its directories now (flat: ``_flat_listings``; fanout: the walk of
        # the subdirectories, whose open listing it drops), not whenever the scan object is collected.
        closing = getattr(scan.listings, "close", None)
        if closing is not None:
            closing()
        self._warn_skipped(scan.skipped)
        self.started.set()

    def _scan(
        self,
        where: str,
        entries: Iterable[DirEntry],
        found: _Found,
        now: float,
        place: tuple[str, str] | None,
    ) -> bool:
        """Add one directory's pages to ``found`` and remove its old temp files (F8).

        ``place``: the two subdirectories ``where`` is (fanout), whose pages must hash there (others are
        misplaced and skipped); None in the flat directory.  True when the fanout marker of this namespace
        was met.  The listing is read ``_CHUNK`` entries at a time: the naming's keys and the trust's page
        test (S3) of a whole chunk at once, the pages taken from it by C-level passes, and a step per
        entry only for the entries that are not pages of ours (docs/SEMANTICS.md "F8 at scale").
        """
        keys_of, are_pages = self._layout.naming.keys_of, self._trust.are_pages
        add_keys, add_mtimes, add_sizes = found.keys.extend, found.mtimes.extend, found.sizes.extend
        share = found.shared.setdefault
        skipped = found.skipped
        marker = os.path.basename(self._layout.marker)
        met = False
        listing = iter(entries)
        while chunk := list(islice(listing, _CHUNK)):
            names = list(map(_name, chunk))
            keys = keys_of(names)
            taken = list(map(and_, map(is_not, keys, repeat(None)), are_pages(chunk)))
            if place is not None:  # and only where its key's probes look
                placed = [k is not None and fanout_dirs(n) == place for n, k in zip(names, keys, strict=True)]
                taken = list(map(and_, taken, placed))
            pages = list(compress(chunk, taken))
            add_keys(compress(keys, taken))  # type: ignore[arg-type]  # each one taken is a key
            add_mtimes(map(_mtime, pages))
            sizes = list(map(_size, pages))
            add_sizes(map(share, sizes, sizes))  # one int object per distinct size
            if len(pages) == len(chunk):
                continue
            for entry, key, page in zip(chunk, keys, taken, strict=True):
                if page:
                    continue
                name = entry.name
                if key is None:
                    if is_temp_name(name):
                        self._sweep(where, entry, now)
                    elif name == marker:
                        met = True
                elif place is not None and fanout_dirs(name) != place:
                    skipped["misplaced"] = skipped.get("misplaced", 0) + 1  # not where its key's probes look
                else:  # S3
                    kind = entry.kind if entry.kind != "file" else "file of another user"
                    skipped[kind] = skipped.get(kind, 0) + 1
        return met

    def _sweep(self, where: str, entry: DirEntry, now: float) -> None:
        """F8, S6: remove the temp file ``entry`` of ``where`` when it is ours and older than temp_max_age."""
        if entry.kind == "file" and entry.uid == self._trust.euid and now - entry.mtime > self._temp_max_age:
            self._layout.remove_temp(os.path.join(where, entry.name))

    def _scan_fanout(self, top: Iterable[DirEntry], found: _Found, now: float) -> None:
        """Scan the listings of a fanout store into ``found`` (F1-fanout).

        The directory itself (``_fanout_top``), then every trusted subdirectory of both levels
        (``_fanout_leaves``).
        """
        for where, entries, place in self._fanout_leaves(self._fanout_top(top, now)):
            self._scan(where, entries, found, now, place)

    def _fanout_top(self, top: Iterable[DirEntry], now: float) -> list[DirEntry]:
        """List the directory itself of a fanout store; answer its first-level subdirectories (F1-fanout).

        Its old temp files are removed, a page of this namespace there refused (the flat layout), the
        marker made when missing.
        """
        directory, key_of = self._directory, self._layout.naming.key_of
        first: list[DirEntry] = []
        flat_pages = 0
        marked = False
        for entry in top:
            name = entry.name
            if entry.kind == "dir" and is_fanout_dir_name(name):
                first.append(entry)
            elif key_of(name) is not None:
                flat_pages += self._trust.is_page(entry)
            elif name == os.path.basename(self._layout.marker):
                marked = True
            elif is_temp_name(name):
                self._sweep(directory, entry, now)
        if flat_pages:
            raise ValueError(
                f"storage directory {directory} holds {flat_pages} page(s) of namespace {self._namespace!r}"
                " in the flat layout, but this store's layout is 'fanout' (setting layout,"
                " HICACHE_FILE_LAYOUT): open it with layout='flat', or move the pages into their fanout"
                " subdirectories first"
            )
        if not marked:
            self._mark_fanout()
        return first

    def _fanout_leaves(
        self, first: Iterable[DirEntry]
    ) -> Iterator[tuple[str, list[DirEntry], tuple[str, str]]]:
        """Yield the trusted second-level subdirectories under ``first``, each marked ready (F1-fanout)."""
        return self._layout.leaves(first, mark_ready=True, unlisted=_skip_unlisted)

    def _mark_fanout(self) -> None:
        """F1-fanout: leave the marker by which a flat store refuses this namespace (never followed: S2)."""
        try:
            self._fs.write_new(self._layout.marker, memoryview(b""), self._trust.file_mode)
        except FileExistsError:
            pass  # made meanwhile by another fanout store of the namespace
        except OSError as exc:
            # EACCES, EROFS...: a flat store would not know; the fanout store works all the same.
            logger.warning("file store: cannot make the layout marker %r: %s", self._layout.marker, exc)


class _Scan:
    """The state of a background scan (F8-bg).

    The listings left (each a directory, its entries and its fanout place), the one being read, the
    filesystem's clock when it began (the temp-file sweep's), the
    S3 counts so far, whether the over-the-limits warning was given, its thread and its stop flag.
    """

    __slots__ = ("listing", "listings", "now", "skipped", "stop", "thread", "warned")

    def __init__(
        self,
        listings: Iterator[tuple[str, Iterator[DirEntry] | list[DirEntry], tuple[str, str] | None]],
        now: float,
    ) -> None:
        self.listings = listings
        self.listing: tuple[str, Iterator[DirEntry], tuple[str, str] | None] | None = None
        self.now = now
        self.skipped: dict[str, int] = {}
        self.warned = False
        self.stop = False
        self.thread: threading.Thread | None = None


class _Found:
    """The pages a start-up listing found, in parallel arrays (F8)."""

    __slots__ = ("keys", "mtimes", "shared", "sizes", "skipped")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.mtimes = array("d")
        self.sizes: list[int] = []  # one int object per distinct size, held by every page of that size
        self.shared: dict[int, int] = {}
        self.skipped: dict[str, int] = {}


def _oldest_first(mtimes: array[float]) -> list[int]:
    """Return the indices of a listing's pages oldest mtime first, ties in the listing's order (F8).

    One stable sort of the indices by time, its key function and comparisons in C; the engine's evictor
    keeps ties in the listing's order too.
    """
    return sorted(range(len(mtimes)), key=mtimes.__getitem__)


def _gather(order: list[int]) -> Callable[[list[_T]], Sequence[_T]]:
    """Return a function that answers the items of a list at the indices ``order``, in that order.

    One C-level call per list (``itemgetter``), where a ``map`` of ``__getitem__`` makes a call per item.
    """
    if len(order) > 1:
        return itemgetter(*order)  # a tuple, with two indices or more
    return lambda items: [items[i] for i in order]


def _flat_listings(
    directory: str, first: DirEntry | None, top: Iterator[DirEntry]
) -> Generator[tuple[str, Iterator[DirEntry], None], None, None]:
    """Yield the flat directory's one listing, begun (``first`` read already); then close ``top`` (F8-bg).

    The entries are read through a ``chain`` (no step per entry), which has no ``close`` of its own: this
    generator closes the listing when the scan moves past it or ends before (``_end`` closes it).
    """
    try:
        yield directory, top if first is None else chain((first,), top), None
    finally:
        closing = getattr(top, "close", None)
        if closing is not None:
            closing()


def _skip_unlisted(path: str, exc: OSError) -> None:
    # EACCES, EIO...: the pages under it stay unknown (not counted, not evicted) until a restart.
    logger.warning("file store: cannot list the fanout subdirectory %r: %s", path, exc)
