"""HiCacheFile: key -> bytes, one file per key, with beliefs and LRU eviction (docs/SEMANTICS.md F, C, B).

The file backend of the storage tier: pages are written once (content-addressed keys), read back, and asked
about very often; many ranks in many processes share one directory.  A key's file is
``<key><namespace>.bin`` (F1; two levels of subdirectories down with ``layout="fanout"``, F1-fanout, checked
by S1's rules), published from a hidden temp file by an atomic rename, so a reader never sees a partial
value (F3, C4).  The class wires its collaborators and holds the public API, the write, the namespace lock
(C6) and the clamp of the cap (S8); each collaborator is a class attribute a variant replaces:
:class:`~hicache.file_trust.FileTrust` (S1, S3), :class:`~hicache.file_layout.FileNaming` and
:class:`~hicache.file_layout.FileLayout` (F1, F2, F1-fanout), :class:`~hicache.file_knowledge.FileKnowledge`
(the beliefs and the accounting under the C1 and F4 guards), :class:`~hicache.file_startup.FileStartup`
(F8, F8-bg) and :class:`~hicache.file_evictor.LRUFileEvictor` (C3, V); a
:class:`~hicache.fs.FileSystem` port for every I/O.

Complexity: ``exists`` O(1) with no filesystem call on a live belief, else one ``stat``; ``set`` one probe,
one write, one rename, plus the evictor's victims; ``batch_*`` O(keys), never a directory scan (F5). Thread
model: safe from several threads (C5); ``_lock`` serializes accounting, removals and belief teaching (the C1
and F4 guards; two writes of one key in flight, V5: docs/ARCHITECTURE.md).  I/O failures are an answer plus
a log line (B2); bad arguments raise ``TypeError``/``ValueError`` naming the parameter before any I/O (F2,
B1).
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from hicache._validate import shown
from hicache.file_config import FileStoreConfig, load_file_config
from hicache.file_evictor import LRUFileEvictor
from hicache.file_knowledge import FileKnowledge
from hicache.file_layout import (
    NAME_MAX,
    NAMESPACE_MARK,
    FileLayout,
    FileNaming,
    escape_key,
    fanout_dirs,
    is_fanout_dir_name,
    is_temp_name,
    key_of_name,
)
from hicache.file_naming import EngineNaming
from hicache.file_startup import FileStartup
from hicache.file_trust import FileTrust
from hicache.fs import FileSystem, OSFileSystem
from hicache.metadata_cache import MetadataCache

__all__ = [
    "NAMESPACE_MARK",
    "NAME_MAX",
    "HiCacheFile",
    "escape_key",
    "fanout_dirs",
    "is_fanout_dir_name",
    "is_temp_name",
    "key_of_name",
]

logger = logging.getLogger(__name__)

_TEMP_PREFIX, _TEMP_SUFFIX = ".", ".tmp"
_TEMP_TRIES = 3  # S6: names tried when a temp name is taken (EEXIST) before the write gives up
BytesLike = bytes | bytearray | memoryview
_T = TypeVar("_T")


def _weakly(method: Callable[..., _T]) -> Callable[..., _T]:
    """Wrap ``method`` (bound to a store or a collaborator) to call it through a weak reference to its object.

    So what holds it (the evictor) keeps the store alive no longer than the store's own references do.
    Called after the store is gone (an evictor kept on its own): ``ReferenceError``.
    """
    ref = weakref.WeakMethod(method)

    def call(*args: Any) -> _T:
        bound = ref()
        if bound is None:
            raise ReferenceError("the file store this evictor served is gone")
        return bound(*args)

    return call


class HiCacheFile:
    """One file per key in a shared directory, with a metadata cache and an LRU evictor.

    ``storage_dir`` (None: the configured one), ``namespace`` (a suffix of
    every file name: a store sees only its own namespace), ``extra_config``
    (see :mod:`hicache.file_config`; it overrides the environment), ``fs``
    (the filesystem port, default the OS), ``clock`` (monotonic seconds for
    the belief lifetimes, default ``time.monotonic``), ``naming`` (F10: an
    :class:`~hicache.file_naming.EngineNaming` names the files as the engine
    does, and brings its own namespace; None: ``escape_key`` and ``namespace``).

    Raises ``TypeError``/``ValueError`` naming the parameter on bad arguments,
    and ``OSError`` when the directory cannot be created or listed.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = HiCacheFile(d, namespace="_r0", extra_config={"enable_metadata_cache": True})
    ...     store.set("page-1", b"kv"), store.exists("page-1"), store.get("page-1"), store.get("page-2")
    ...     store.batch_exists(["page-1", "page-2"]), sorted(os.listdir(d))
    (True, True, b'kv', None)
    (1, ['.hicache_r0.lock', 'page-1_r0.bin'])
    """

    # The collaborators, each a seam a variant replaces with a subclass.
    trust_class: ClassVar[type[FileTrust]] = FileTrust  # S1, S3: which nodes are trusted
    naming_class: ClassVar[type[FileNaming]] = FileNaming  # F1, F2: the names, unless naming= is given
    layout_class: ClassVar[type[FileLayout]] = FileLayout  # F1-fanout: where the files lie
    evictor_class: ClassVar[type[LRUFileEvictor]] = LRUFileEvictor  # C3, V: the accounting
    startup_class: ClassVar[type[FileStartup]] = FileStartup  # F8: the start-up scan
    knowledge_class: ClassVar[type[FileKnowledge]] = FileKnowledge  # C1, F4: beliefs and accounting
    _scan_batch: int = 4096  # F8-bg: listing entries per batch (a test's subclass may take fewer)
    _scan_thread: bool = True  # F8-bg: False (a test's subclass): no thread, the test calls _scan_step

    def __init__(
        self,
        storage_dir: str | os.PathLike[str] | None = None,
        *,
        namespace: str = "",
        extra_config: Mapping[str, object] | None = None,
        fs: FileSystem | None = None,
        clock: Callable[[], float] | None = None,
        naming: EngineNaming | None = None,
    ) -> None:
        config = load_file_config(extra_config)
        directory, namespace = _arguments(storage_dir, namespace, naming, clock, config)
        self._config = config
        self._namespace = namespace
        names = self.naming_class(namespace) if naming is None else naming  # F10: the engine's names
        self._check_key = names.check
        self._fs: FileSystem = fs if fs is not None else OSFileSystem()
        self._trust = trust = self.trust_class(self._fs, config.shared_group)
        self._max_value_size = config.effective_max_value_size
        directory = trust.trusted_directory(directory)
        self._directory = directory
        self._layout = layout = self.layout_class(
            directory, names, fanout=config.layout == "fanout", fs=self._fs, trust=trust
        )
        self._lock = threading.RLock()
        self._beliefs: MetadataCache | None = None
        if config.enable_metadata_cache:
            self._beliefs = MetadataCache(
                config.metadata_ttl,
                clock=clock if clock is not None else time.monotonic,
                eviction=config.metadata_eviction,
            )
        # The evictor calls back through weak references to the collaborators: a store in no reference
        # cycle goes with its last reference, and its namespace lock with it (C6), not at a collection.
        self._startup = startup = self.startup_class(
            layout,
            trust,
            beliefs=self._beliefs,
            lock=self._lock,
            temp_max_age=config.temp_max_age,
            batch=self._scan_batch,
            thread=self._scan_thread,
        )
        self._evictor = startup.evictor = self.evictor_class(
            self._fs,
            _weakly(layout.path),
            directory=directory,
            max_size=self._clamped_cap(config.max_size),
            min_free_space=config.min_free_space,
            eviction_ratio=config.eviction_ratio,
            on_evict=_on_evict(self._beliefs, startup, config.startup_scan == "background"),  # V6
            lock=self._lock,
            accept=_weakly(trust.is_page),
        )
        self._knowledge = self.knowledge_class(
            layout,
            trust,
            evictor=self._evictor,
            beliefs=self._beliefs,
            lock=self._lock,
            note_gone=startup.note_gone,
            max_value_size=self._max_value_size,
        )
        self._lock_namespace()
        if config.startup_scan == "background":
            startup.begin()
        else:
            startup.start()
            startup.started.set()

    # -- introspection -------------------------------------------------------

    @property
    def config(self) -> FileStoreConfig:
        """The settings the store was built with, as ``load_file_config`` read them (F9)."""
        return self._config

    @property
    def directory(self) -> str:
        """The storage directory, as configured (F9)."""
        return self._directory

    @property
    def namespace(self) -> str:
        """The namespace: the suffix that ends this store's file names before ``.bin`` (F1)."""
        return self._namespace

    @property
    def evictor(self) -> LRUFileEvictor:
        """The store's evictor (read its ``snapshot()``/``total``; do not drive it directly)."""
        return self._evictor

    def file_name(self, key: str) -> str:
        """Return the name of ``key``'s file (F1); ValueError for a bad key (F2)."""
        self._check_key(key)
        return self._layout.naming.name(key)

    def file_path(self, key: str) -> str:
        """Return the path of ``key``'s file (flat, or fanout: F1-fanout); ValueError for a bad key (F2)."""
        self._check_key(key)
        return self._layout.path(key)

    @property
    def layout_marker(self) -> str:
        """The fanout marker, ``.hicache<namespace>.fanout``, a file a fanout store keeps in the directory.

        By it a flat store knows that this namespace's pages are in subdirectories (F1-fanout).
        """
        return self._layout.marker

    def snapshot(self) -> tuple[tuple[Hashable, float], ...]:
        """Return the live beliefs with their births, in eviction order, changing nothing.  O(beliefs).

        The metadata cache's own ``snapshot()`` (empty with beliefs off): a checker's view, where
        ``exists`` would refresh a belief under ``"lru"``.  The tracked files: ``evictor.snapshot()``.
        """
        return self._knowledge.snapshot()

    def wait_started(self, timeout: float | None = None) -> bool:
        """Wait until start-up is complete, the background scan ended; True when it is (F8-bg).

        Waits at most ``timeout`` seconds (None: as long as it takes).  Under ``startup_scan="blocking"``
        True at once.
        """
        return self._startup.started.wait(timeout)

    def close(self) -> None:
        """Stop the background scan after the batch under way and wait for its thread (F8-bg).

        The pages it has not adopted stay unknown until a probe finds them; the store stays usable.
        Idempotent; nothing to do under ``startup_scan="blocking"``.
        """
        self._startup.close()

    def _scan_step(self) -> bool:
        """Run one batch of the background scan: a test's store has no scan thread (F8-bg)."""
        return self._startup.step()

    def check_invariants(self) -> None:
        """Assert the internal invariants (O(n): for tests)."""
        self._knowledge.check_invariants()

    # -- the operations ------------------------------------------------------

    def exists(self, key: str) -> bool:
        """F6: a live belief answers with no filesystem call; else one ``stat``.  O(1)."""
        self._check_key(key)
        return self._knowledge.believes(key) or self._knowledge.on_disk(key)

    def set(self, key: str, value: BytesLike) -> bool:
        """F3: store ``value`` under ``key``; True when it is on disk (or already was).

        An existing key is only refreshed (the write is skipped).  Never raises
        for I/O: False plus a log line, with the temp file removed and the
        reservation released.
        """
        self._check_key(key)
        return self._set(key, _as_bytes(value))

    def get(self, key: str) -> bytes | None:
        """F4: the value of ``key``, or None when it is missing or cannot be read whole."""
        self._check_key(key)
        data, missing, removals, published = self._knowledge.read(key)
        size = None if data is None else len(data)
        self._knowledge.observe(key, data is not None, missing, removals, published, size)
        return data

    def get_into(self, key: str, buffer: Any) -> bool:
        """F4: read ``key``'s value into ``buffer``; True only when its size is exactly ``len(buffer)``.

        ``buffer`` is a writable, contiguous bytes-like object (bytearray,
        writable memoryview, numpy array...).  A file of another size is not
        read at all (a page of another layout is never taken for this one).
        """
        self._check_key(key)
        return self._knowledge.read_whole(key, _as_writable(buffer))

    def delete(self, key: str) -> bool:
        """F7: remove ``key``'s file; True when it is gone afterwards (False: it could not be removed)."""
        self._check_key(key)
        path, knowledge = self._layout.path(key), self._knowledge
        with knowledge.removal():
            knowledge.forget(key)
            try:
                self._fs.unlink(path)
            except FileNotFoundError:
                pass  # nothing to remove: the key is gone all the same
            except OSError as exc:
                # EPERM/EBUSY/EISDIR/EIO...: the file stays, and so does its accounting.
                logger.warning("file store: cannot delete %r: %s", path, exc)
                return False
            knowledge.removed(key)
            return True

    def clear(self) -> bool:
        """F7: remove every file of this namespace (only those); reset beliefs and accounting.

        Files that cannot be removed stay tracked (their bytes are still on
        disk).  True when every file was removed.  O(files in the directory).
        """
        knowledge = self._knowledge
        with knowledge.removal():
            knowledge.forget_all()
            try:
                found, left = self._layout.pages()
            except OSError as exc:
                # Any errno: nothing can be removed without a listing; the accounting stays as it was.
                logger.warning("file store: cannot list %r to clear it: %s", self._directory, exc)
                return False
            kept: list[tuple[float, str, int]] = []
            for where, entry, key in found:
                try:
                    self._fs.unlink(os.path.join(where, entry.name))  # never follows (S3)
                    knowledge.note_gone(key)
                except FileNotFoundError:
                    knowledge.note_gone(key)  # removed meanwhile by someone else: gone all the same
                except OSError as exc:
                    # EPERM/EBUSY/EISDIR/EIO...: it stays on disk; a page of ours stays counted.
                    logger.warning("file store: cannot remove %r while clearing: %s", key, exc)
                    if self._trust.is_page(entry):
                        kept.append((entry.mtime, key, entry.size))
                    else:
                        left += 1
            knowledge.readopt(kept)
            return not kept and not left

    def batch_set(self, keys: Sequence[str], values: Sequence[BytesLike]) -> list[bool]:
        """F5: ``set`` of each pair, in order; every argument is checked before any I/O."""
        keys, views = _listed("keys", keys), [_as_bytes(v) for v in _listed("values", values)]
        if len(keys) != len(views):
            raise ValueError(f"values must have one value per key: {len(keys)} keys, {len(views)} values")
        for key in keys:
            self._check_key(key)
        return [self._set(key, view) for key, view in zip(keys, views, strict=True)]

    def batch_get(self, keys: Iterable[str]) -> list[bytes | None]:
        """F5: ``get`` of each key, in order.

        What the reads teach (recency, beliefs) is applied in batches, one lock acquisition each (M9):
        pending lessons are applied before a missing key is forgotten, so each key's lessons and
        forgetting keep the order of the reads.
        """
        keys, knowledge = self._check_keys(keys), self._knowledge
        values: list[bytes | None] = []
        lessons: list[tuple[str, int, int]] = []  # (key, removals mark before its read, size): not applied
        for key in keys:
            data, missing, removals, published = knowledge.read(key)
            if missing:
                knowledge.learn_many(lessons)
                lessons.clear()
                knowledge.forget_missing(key, published)
            elif data is not None:
                lessons.append((key, removals, len(data)))
            values.append(data)
        knowledge.learn_many(lessons)
        return values

    def batch_exists(self, keys: Iterable[str]) -> int:
        """F5: the length of the longest prefix of ``keys`` that exists.  O(keys asked), no scan.

        The believed keys are answered by the metadata cache a run at a time (``contains_prefix``: one
        lock acquisition and one clock reading per run, M9); only the first key of a run that is not
        believed goes to the filesystem (F6), and the next run starts after it if it exists.
        """
        keys = self._check_keys(keys)
        on_disk, beliefs, total = self._knowledge.on_disk, self._knowledge.beliefs, len(keys)
        if beliefs is None:
            for count, key in enumerate(keys):
                if not on_disk(key):
                    return count
            return total
        remaining = iter(keys)
        count = 0
        while True:
            count += beliefs.contains_prefix(remaining)  # consumes the run and the first unbelieved key
            if count == total or not on_disk(keys[count]):
                return count
            count += 1

    def _check_keys(self, keys: Iterable[str]) -> list[str]:
        """Return ``keys`` as a list, each checked by the naming (F2, S5), the first bad one raising."""
        keys = _listed("keys", keys)
        self._layout.check_keys(keys)
        return keys

    def _set(self, key: str, view: memoryview) -> bool:
        """``set`` of a checked key: refresh it if it is believed or on disk, else reserve, write, commit."""
        knowledge = self._knowledge
        if knowledge.refresh(key):
            return True
        st = knowledge.probe(key, touch=True)
        if st is not None and not self._trust.is_page(st):
            # S3: a symlink, FIFO, directory or another user's file holds the name: never acknowledge a
            # write that is not stored, and never write through or over what is not ours.
            path, kind = self._layout.path(key), st.kind
            logger.warning(
                "file store: %r is a %s of uid %d, not a page: %r not written", path, kind, st.uid, key
            )
        if st is not None:
            return self._trust.is_page(st)
        if not knowledge.reserve(key, len(view)):
            logger.warning("file store: no room for %r (%d bytes): not written", key, len(view))
            return False
        path = self._layout.path(key)
        removals = self._write(key, view, path, knowledge.overlaps.removals)
        knowledge.settle(key, len(view), removals, path)
        return removals is not None

    def _write(self, key: str, view: memoryview, path: str, removals: int) -> int | None:
        """Publish ``view`` at ``path``; on ``ENOSPC`` while writing, evict as for the cap and retry (F3, S8).

        It retries once.  Answers the removals mark the commit is guarded by (``removals``, or the one
        after the relief), or None when nothing was published (every attempt's temp file removed, logged).
        """
        failed, writing = self._write_once(view, path)
        if failed is not None and self._layout.fanout and isinstance(failed, FileNotFoundError):
            # F1-fanout: its subdirectory went (removed by hand, or by another program): made again,
            # retried once.
            self._layout.forget_ready(os.path.dirname(path))
            failed, writing = self._write_once(view, path)
        if failed is not None and writing and failed.errno == errno.ENOSPC:
            # S8: the disk is full while old pages could go: evict as for the cap, retry once.
            with self._lock:
                evicted = self._evictor.relieve(key, len(view))  # ends the removal it opened
                removals = self._knowledge.overlaps.removals
            if evicted:
                logger.warning("file store: evicted to make room on a full disk; retrying %r", key)
                failed, writing = self._write_once(view, path)
        return removals if failed is None else None

    def _write_once(self, view: memoryview, path: str) -> tuple[OSError | None, bool]:
        """Make one attempt: write a new temp file, rename it to ``path``.

        Answers (None, False) when published, else (the error, whether it came while writing), with the
        temp file removed and a log line (F3).
        """
        temp = None
        writing = True
        where = os.path.dirname(path)
        try:
            self._layout.prepare(where)
            for attempt in range(_TEMP_TRIES):
                # S6: a taken name (EEXIST: another writer's, or a planted node) is never unlinked or
                # written through: another random name is drawn, up to _TEMP_TRIES names.
                name = os.path.join(where, f"{_TEMP_PREFIX}{secrets.token_hex(6)}{_TEMP_SUFFIX}")
                try:
                    self._fs.write_new(name, view, self._trust.file_mode)  # O_EXCL | O_NOFOLLOW, 0600 (S2)
                except FileExistsError:
                    if attempt + 1 == _TEMP_TRIES:
                        raise
                    continue
                except OSError:
                    temp = name  # created, maybe partly written: removed below
                    raise
                temp = name
                break
            assert temp is not None
            writing = False
            self._fs.replace(temp, path)
        except OSError as exc:
            # ENOSPC, EIO, EDQUOT, ...: the value is not stored; undo everything the attempt did (F3).
            logger.warning("file store: cannot write %r: %s", path, exc)
            if temp is not None:
                self._layout.remove_temp(temp)
            return exc, writing
        return None, False

    @property
    def lock_file(self) -> str:
        """C6: the advisory lock file of this namespace, ``.hicache<namespace>.lock`` in the directory."""
        return os.path.join(self._directory, f".hicache{self._namespace}.lock")

    def _lock_namespace(self) -> None:
        """C6: hold the namespace's advisory lock for the store's life; warn if another live store has it."""
        try:
            handle = self._fs.try_lock(self.lock_file, self._trust.file_mode)
        except OSError as exc:
            # EACCES, ELOOP (a symlink there), EROFS...: no detection, the store works all the same.
            logger.warning("file store: cannot take the lock file %r: %s", self.lock_file, exc)
            return
        if handle is None:
            logger.warning(
                "file store: another live store holds namespace %r of %r (lock file %r): each store"
                " enforces max_size on its own writes only, so this namespace can hold up to that many"
                " times the cap; give each process its own namespace",
                self._namespace,
                self._directory,
                self.lock_file,
            )
            return
        weakref.finalize(self, self._fs.unlock, handle)

    def _clamped_cap(self, max_size: int) -> int:
        """S8: ``max_size``, or the filesystem's capacity when the cap is above it (with a warning)."""
        if max_size <= 0:
            return max_size
        try:
            capacity = self._fs.capacity_bytes(self._directory)
        except OSError as exc:
            # Any errno: the cap cannot be checked against the disk; it is kept as configured.
            logger.warning("file store: cannot probe the size of %r: %s", self._directory, exc)
            return max_size
        if 0 < capacity < max_size:
            logger.warning(
                "file store: max_size %d is above the %d bytes of the filesystem holding %r:"
                " clamped to %d (the disk is the real limit)",
                max_size,
                capacity,
                self._directory,
                capacity,
            )
            return capacity
        return max_size


def _listed(name: str, items: Iterable[_T]) -> list[_T]:
    """Return a batch's ``items`` as a list; B1: a TypeError naming ``name`` when they are not iterable."""
    if type(items) is list:
        return items
    try:
        return list(items)
    except TypeError:
        if isinstance(items, Iterable):
            raise  # raised by the caller's own iterator: its error, as it is
        raise TypeError(f"{name} must be an iterable, got {type(items).__name__} {shown(items)}") from None


def _as_bytes(value: object) -> memoryview:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"value must be bytes, bytearray or memoryview, got {type(value).__name__} {value!r:.100}"
        )
    view = memoryview(value)
    if not view.c_contiguous:
        return memoryview(view.tobytes())  # os.write takes contiguous buffers only: one copy
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _as_writable(buffer: object) -> memoryview:
    try:
        view = memoryview(buffer)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"buffer must be a writable bytes-like object, got {type(buffer).__name__}") from None
    if view.readonly:
        raise TypeError(f"buffer must be writable, got a read-only {type(buffer).__name__}")
    if not view.c_contiguous:
        raise ValueError(f"buffer must be contiguous, got a non-contiguous {type(buffer).__name__}")
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _on_evict(
    beliefs: MetadataCache | None, startup: FileStartup, background: bool
) -> Callable[[str], object] | None:
    """Return what the evictor calls for each victim before its unlink: its belief goes (V6).

    F8-bg: and, while the scan runs, its key is noted gone (through a weak reference to the start-up).
    """
    if not background:
        return None if beliefs is None else beliefs.remove
    note_gone = _weakly(startup.note_gone)

    def evicted(key: str) -> None:
        if beliefs is not None:
            beliefs.remove(key)
        note_gone(key)

    return evicted


def _arguments(
    storage_dir: object, namespace: object, naming: object, clock: object, config: FileStoreConfig
) -> tuple[str, str]:
    """Check the constructor's arguments (B1); return the storage directory and the namespace."""
    if naming is not None:
        if not isinstance(naming, EngineNaming):
            raise TypeError(f"naming must be an EngineNaming or None, got {type(naming).__name__}")
        if namespace:
            raise ValueError(f"namespace must be empty with a naming (it has its own), got {namespace!r}")
        namespace = naming.namespace
    if storage_dir is None:
        directory = config.storage_dir
    elif isinstance(storage_dir, (str, os.PathLike)):
        directory = os.fspath(storage_dir)
        if not isinstance(directory, str) or not directory or "\0" in directory:
            raise ValueError(f"storage_dir must be a non-empty str path without NUL, got {storage_dir!r}")
    else:
        raise TypeError(
            f"storage_dir must be a str path or None, got {type(storage_dir).__name__} {storage_dir!r}"
        )
    if not isinstance(namespace, str):
        raise TypeError(f"namespace must be a str, got {type(namespace).__name__} {namespace!r}")
    if "/" in namespace or "\0" in namespace or (os.altsep is not None and os.altsep in namespace):
        raise ValueError(f"namespace must not contain a path separator or NUL, got {namespace!r}")
    if namespace and not namespace.startswith(NAMESPACE_MARK) and naming is None:
        raise ValueError(
            f"namespace must be empty or start with {NAMESPACE_MARK!r} (it ends the key in file names),"
            f" got {namespace!r}"
        )
    if clock is not None and not callable(clock):
        raise TypeError(f"clock must be callable or None, got {type(clock).__name__} {clock!r}")
    return directory, namespace
