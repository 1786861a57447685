"""HiCacheFile: key -> bytes, one file per key, with beliefs and LRU eviction (docs/SEMANTICS.md F, C, B).

The file backend of the storage tier: pages are written once (content-addressed keys), read back, and asked
about very often; many ranks in many processes share one directory.  A key's file is
``<key><namespace>.bin`` (F1; two levels of subdirectories down with ``layout="fanout"``, F1-fanout, checked
by S1's rules), published from a hidden temp file by an atomic rename, so a reader never sees a partial
value (F3, C4). Start-up (F8) lists the directory once, streamed.  Collaborators: a
:class:`~hicache.metadata_cache.MetadataCache` of beliefs, an :class:`~hicache.file_evictor.LRUFileEvictor`
for the accounting (C3), and a :class:`~hicache.fs.FileSystem` port for every I/O.

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
import re
import secrets
import sys
import threading
import time
import weakref
import zlib
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, MutableSet, Sequence
from itertools import chain, islice
from typing import Any, ClassVar, TypeVar

from hicache._validate import shown
from hicache.file_config import FileStoreConfig, load_file_config
from hicache.file_evictor import LRUFileEvictor
from hicache.file_naming import EngineNaming
from hicache.file_trust import FileTrust
from hicache.fs import DirEntry, FileStat, FileSystem, FileTooLargeError, NotAPageError, OSFileSystem
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

NAME_MAX = 255  # bytes in one file name on the filesystems the engine runs on
NAMESPACE_MARK = "_"  # a namespace starts with it; keys escape it (see escape_key)
_ESCAPED = re.compile(r"%(25|5F)")
_ALTSEP = os.altsep
_TEMP_PREFIX, _TEMP_SUFFIX = ".", ".tmp"
_FS_ENCODING = sys.getfilesystemencoding()
_TEMP_NAME = re.compile(r"\.[0-9a-f]{12}\.tmp")
_TEMP_TRIES = 3  # S6: names tried when a temp name is taken (EEXIST) before the write gives up
# F1-fanout: the names of the fanout subdirectories of each level
_HEX_BYTE = [f"{i:02x}" for i in range(256)]
_HEX_INDEX = {name: i for i, name in enumerate(_HEX_BYTE)}
BytesLike = bytes | bytearray | memoryview
_T = TypeVar("_T")


def escape_key(key: str) -> str:
    """Return the key as it appears in a file name, with ``%`` and ``_`` escaped.

    So the first ``_`` of a name always starts its namespace (F1: no two namespaces can name the same file).

    >>> escape_key("3fa9"), escape_key("a_b%c")
    ('3fa9', 'a%5Fb%25c')
    """
    if "%" in key or NAMESPACE_MARK in key:
        return key.replace("%", "%25").replace(NAMESPACE_MARK, "%5F")
    return key


def key_of_name(name: str, namespace: str) -> str | None:
    """Return the key of the file ``name`` if it belongs to ``namespace``, else None (F1).

    >>> key_of_name("a%5Fb_r1.bin", "_r1"), key_of_name("x_b_a.bin", "_a"), key_of_name("k_r1.bin", "")
    ('a_b', None, None)
    """
    if not name.endswith(".bin") or name.startswith("."):
        return None
    stem = name[:-4]
    mark = stem.find(NAMESPACE_MARK)
    part, own = (stem, "") if mark < 0 else (stem[:mark], stem[mark:])
    if own != namespace or not part:
        return None
    if "%" not in part:
        return part  # nothing escaped (and no "_": the first one starts the namespace)
    key = _ESCAPED.sub(lambda m: "%" if m[1] == "25" else NAMESPACE_MARK, part)
    return key if escape_key(key) == part else None  # a stray "%" is not a name this store writes


def fanout_dirs(name: str) -> tuple[str, str]:
    """Return the two subdirectories of the file ``name`` in the fanout layout (F1-fanout).

    They are the first and second bytes of the CRC-32 of its encoded name, each as two lower-case hex
    digits (stable across runs and platforms).

    >>> fanout_dirs("3fa9.bin"), fanout_dirs("3fa9_r1.bin")
    (('fc', '14'), ('cd', 'd1'))
    """
    crc = zlib.crc32(os.fsencode(name))
    return _HEX_BYTE[crc >> 24], _HEX_BYTE[crc >> 16 & 0xFF]


def is_fanout_dir_name(name: str) -> bool:
    """F1-fanout: a name a fanout subdirectory has (two lower-case hex digits).

    >>> is_fanout_dir_name("0c"), is_fanout_dir_name("0C"), is_fanout_dir_name("0c1")
    (True, False, False)
    """
    return name in _HEX_INDEX


def is_temp_name(name: str) -> bool:
    """Tell whether ``name`` is a store's temp file name, exactly ``.<12 lower-case hex digits>.tmp`` (S6).

    Never a key's file, since keys cannot start with a dot, and not another program's ``.state.tmp``.

    >>> is_temp_name(".0123456789ab.tmp"), is_temp_name(".other-program-state.tmp"), is_temp_name(".ab.tmp")
    (True, False, False)
    """
    return len(name) == 17 and _TEMP_NAME.fullmatch(name) is not None


def _weakly(method: Callable[..., _T]) -> Callable[..., _T]:
    """Wrap ``method`` (bound to a store) to call it through a weak reference to its store.

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

    trust_class: ClassVar[type[FileTrust]] = FileTrust  # S1, S3: which nodes are trusted

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
        self._config = config
        self._namespace = namespace
        self._naming = naming  # F10: the engine's names instead of escape_key's (None: the default)
        self._suffix = namespace + ".bin"
        try:
            self._suffix_bytes = len(self._suffix.encode(_FS_ENCODING))  # strict (S5)
        except UnicodeEncodeError:
            raise ValueError(
                f"namespace cannot be encoded as part of a file name, got {namespace!r}"
            ) from None
        self._fs: FileSystem = fs if fs is not None else OSFileSystem()
        self._trust = trust = self.trust_class(self._fs, config.shared_group)
        self._max_value_size = config.effective_max_value_size
        self._fanout = config.layout == "fanout"
        # F1-fanout: the fanout subdirectories this store made or found and checked: [top] for the 256 of
        # the first level, [256 + top * 256 + sub] for those under them.
        self._ready = bytearray(256 + 256 * 256) if self._fanout else bytearray()
        directory = trust.trusted_directory(directory)
        self._directory = directory
        self._lock = threading.RLock()
        self._beliefs: MetadataCache | None = None
        if config.enable_metadata_cache:
            self._beliefs = MetadataCache(
                config.metadata_ttl,
                clock=clock if clock is not None else time.monotonic,
                eviction=config.metadata_eviction,
            )
        # The evictor calls back into this store through weak references: a store in no reference cycle
        # goes with its last reference, and its namespace lock with it (C6), not at a later collection.
        self._evictor = LRUFileEvictor(
            self._fs,
            _weakly(self._path),
            directory=directory,
            max_size=self._clamped_cap(config.max_size),
            min_free_space=config.min_free_space,
            eviction_ratio=config.eviction_ratio,
            on_evict=self._on_evict(config.startup_scan == "background"),  # V6: the belief goes first
            lock=self._lock,
            accept=_weakly(trust.is_page),
        )
        self._overlaps = self._evictor.overlaps  # the removals and publications a probe reads (C1, F4)
        # F8-bg: the keys whose files this store removed or found missing since its background scan
        # began (None: no scan under way); the scan's state; set once start-up is complete.
        self._scan_gone: MutableSet[str] | None = None
        self._scanning: _Scan | None = None
        self._started = threading.Event()
        self._lock_namespace()
        if config.startup_scan == "background":
            self._begin_scan()
        else:
            self._start()
            self._started.set()

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
        if self._naming is not None:
            return self._naming.name(key)
        return escape_key(key) + self._suffix

    def file_path(self, key: str) -> str:
        """Return the path of ``key``'s file; ValueError for a bad key (F2).

        The file is in the directory (``flat``) or two subdirectories down (``fanout``, F1-fanout).
        """
        self._check_key(key)
        return self._path(key)

    @property
    def layout_marker(self) -> str:
        """The fanout marker, ``.hicache<namespace>.fanout``, a file a fanout store keeps in the directory.

        By it a flat store knows that this namespace's pages are in subdirectories (F1-fanout).
        """
        return os.path.join(self._directory, f".hicache{self._namespace}.fanout")

    def snapshot(self) -> tuple[tuple[Hashable, float], ...]:
        """Return the live beliefs with their births, in eviction order, changing nothing.  O(beliefs).

        The metadata cache's own ``snapshot()`` (empty with beliefs off): a checker's view, where
        ``exists`` would refresh a belief under ``"lru"``.  The tracked files: ``evictor.snapshot()``.
        """
        return () if self._beliefs is None else self._beliefs.snapshot()

    def wait_started(self, timeout: float | None = None) -> bool:
        """Wait until start-up is complete, the background scan ended; True when it is (F8-bg).

        Waits at most ``timeout`` seconds (None: as long as it takes).  Under ``startup_scan="blocking"``
        True at once.
        """
        return self._started.wait(timeout)

    def close(self) -> None:
        """Stop the background scan after the batch under way and wait for its thread (F8-bg).

        The pages it has not adopted stay unknown until a probe finds them; the store stays usable.
        Idempotent; nothing to do under ``startup_scan="blocking"``.
        """
        scan = self._scanning
        if scan is None:
            return
        scan.stop = True
        thread = scan.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._end_scan(scan)

    def check_invariants(self) -> None:
        """Assert the internal invariants (O(n): for tests)."""
        self._evictor.check_invariants()
        if self._beliefs is not None:
            self._beliefs.check_invariants()
        with self._lock:
            assert not self._overlaps.removing, "a removal was left half done"

    # -- the operations ------------------------------------------------------

    def exists(self, key: str) -> bool:
        """F6: a live belief answers with no filesystem call; else one ``stat``.  O(1)."""
        self._check_key(key)
        return self._exists(key)

    def set(self, key: str, value: BytesLike) -> bool:
        """F3: store ``value`` under ``key``; True when it is on disk (or already was).

        An existing key is only refreshed (the write is skipped).  Never raises
        for I/O: False plus a log line, with the temp file removed and the
        reservation released.
        """
        self._check_key(key)
        return self._set(key, self._as_bytes(value))

    def get(self, key: str) -> bytes | None:
        """F4: the value of ``key``, or None when it is missing or cannot be read whole."""
        self._check_key(key)
        data, missing, removals, published = self._read(key)
        size = None if data is None else len(data)
        self._observe(key, data is not None, missing, removals, published, size)
        return data

    def get_into(self, key: str, buffer: Any) -> bool:
        """F4: read ``key``'s value into ``buffer``; True only when its size is exactly ``len(buffer)``.

        ``buffer`` is a writable, contiguous bytes-like object (bytearray,
        writable memoryview, numpy array...).  A file of another size is not
        read at all (a page of another layout is never taken for this one).
        """
        self._check_key(key)
        view = self._as_writable(buffer)
        got, missing, removals, published = self._look(
            key,
            lambda path: self._fs.read_into(path, view, self._max_value_size, self._trust.is_page),
            "read",
        )
        whole = False
        if got is not None:
            size, read = got
            if size != len(view):
                logger.warning(
                    "file store: %r holds %d bytes, the buffer %d: not read", self._path(key), size, len(view)
                )
            elif read != size:
                logger.warning("file store: short read of %r: %d of %d bytes", self._path(key), read, size)
            else:
                whole = True
        self._observe(key, whole, missing, removals, published, len(view))
        return whole

    def delete(self, key: str) -> bool:
        """F7: remove ``key``'s file; True when it is gone afterwards (False: it could not be removed)."""
        self._check_key(key)
        path = self._path(key)
        with self._lock:
            self._overlaps.start_removal()
            try:
                if self._beliefs is not None:
                    self._beliefs.remove(key)
                try:
                    self._fs.unlink(path)
                except FileNotFoundError:
                    pass  # nothing to remove: the key is gone all the same
                except OSError as exc:
                    # EPERM/EBUSY/EISDIR/EIO...: the file stays, and so does its accounting.
                    logger.warning("file store: cannot delete %r: %s", path, exc)
                    return False
                self._note_gone(key)
                self._evictor.discard(key)
                return True
            finally:
                self._overlaps.end_removal()

    def clear(self) -> bool:
        """F7: remove every file of this namespace (only those); reset beliefs and accounting.

        Files that cannot be removed stay tracked (their bytes are still on
        disk).  True when every file was removed.  O(files in the directory).
        """
        with self._lock:
            self._overlaps.start_removal()
            try:
                if self._beliefs is not None:
                    self._beliefs.clear()
                try:
                    found, left = self._page_nodes()
                except OSError as exc:
                    # Any errno: nothing can be removed without a listing; the accounting stays as it was.
                    logger.warning("file store: cannot list %r to clear it: %s", self._directory, exc)
                    return False
                kept: list[tuple[float, str, str, int]] = []
                for where, entry, key in found:
                    try:
                        self._fs.unlink(os.path.join(where, entry.name))  # never follows (S3)
                        self._note_gone(key)
                    except FileNotFoundError:
                        self._note_gone(key)  # removed meanwhile by someone else: gone all the same
                    except OSError as exc:
                        # EPERM/EBUSY/EISDIR/EIO...: it stays on disk; a page of ours stays counted.
                        logger.warning("file store: cannot remove %r while clearing: %s", key, exc)
                        if self._trust.is_page(entry):
                            kept.append((entry.mtime, entry.name, key, entry.size))
                        else:
                            left += 1
                self._evictor.clear()
                # Survivors are adopted again oldest first, ties in the listing's order, as start-up
                # seeds pages (F8, V2).
                kept.sort(key=lambda page: page[0])
                for _mtime, _name, key, size in kept:
                    self._evictor.touch(key, size)
                return not kept and not left
            finally:
                self._overlaps.end_removal()

    def batch_set(self, keys: Sequence[str], values: Sequence[BytesLike]) -> list[bool]:
        """F5: ``set`` of each pair, in order; every argument is checked before any I/O."""
        keys, views = _listed("keys", keys), [self._as_bytes(v) for v in _listed("values", values)]
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
        keys = self._check_keys(keys)
        values: list[bytes | None] = []
        lessons: list[tuple[str, int, int]] = []  # (key, removals mark before its read, size): not applied
        for key in keys:
            data, missing, removals, published = self._read(key)
            if missing:
                self._learn_many(lessons)
                lessons.clear()
                self._forget_missing(key, published)
            elif data is not None:
                lessons.append((key, removals, len(data)))
            values.append(data)
        self._learn_many(lessons)
        return values

    def batch_exists(self, keys: Iterable[str]) -> int:
        """F5: the length of the longest prefix of ``keys`` that exists.  O(keys asked), no scan.

        The believed keys are answered by the metadata cache a run at a time (``contains_prefix``: one
        lock acquisition and one clock reading per run, M9); only the first key of a run that is not
        believed goes to the filesystem (F6), and the next run starts after it if it exists.
        """
        keys = self._check_keys(keys)
        beliefs, total = self._beliefs, len(keys)
        if beliefs is None:
            for count, key in enumerate(keys):
                if not self._on_disk(key):
                    return count
            return total
        remaining = iter(keys)
        count = 0
        while True:
            count += beliefs.contains_prefix(remaining)  # consumes the run and the first unbelieved key
            if count == total or not self._on_disk(keys[count]):
                return count
            count += 1

    # -- internals -----------------------------------------------------------

    def _path(self, key: str) -> str:
        naming = self._naming
        if naming is not None and not self._fanout:
            return f"{self._directory}/{naming.name(key)}"  # the directory is resolved: no trailing "/"
        name = escape_key(key) + self._suffix if naming is None else naming.name(key)
        if self._fanout:
            top, sub = fanout_dirs(name)
            return f"{self._directory}/{top}/{sub}/{name}"
        return os.path.join(self._directory, name)

    def _check_key(self, key: object) -> None:
        """F2, S5: non-empty str, no separator, NUL or leading dot, strictly encodable, name <= NAME_MAX."""
        if self._naming is not None:
            self._naming.check(key)  # F10: the engine's names hold fewer keys
            return
        if not isinstance(key, str):
            raise TypeError(f"key must be a str, got {type(key).__name__} {key!r}")
        if not key or key[0] == "." or "/" in key or "\0" in key or (_ALTSEP is not None and _ALTSEP in key):
            raise ValueError(
                "key must be a non-empty str without a path separator or NUL, not starting"
                f" with '.', got {key!r:.100}"
            )
        if key.isascii():
            # Bytes of the escaped name: at most 3 per char ("_" -> "%5F"); exact only when it may matter.
            if len(key) * 3 + self._suffix_bytes > NAME_MAX:
                name_bytes = len(escape_key(key)) + self._suffix_bytes
                if name_bytes > NAME_MAX:
                    raise ValueError(
                        f"key makes a file name of {name_bytes} bytes (limit {NAME_MAX}), got {key!r:.100}"
                    )
            return
        try:
            # S5: strict, so that no lone surrogate passes (os.fsencode's surrogateescape would map
            # "\udcc3\udca9" to the bytes of "é": two keys, one file).
            name_bytes = len(escape_key(key).encode(_FS_ENCODING)) + self._suffix_bytes
        except UnicodeEncodeError:
            raise ValueError(f"key cannot be encoded as a file name, got {key!r:.100}") from None
        if name_bytes > NAME_MAX:
            raise ValueError(
                f"key makes a file name of {name_bytes} bytes (limit {NAME_MAX}), got {key!r:.100}"
            )

    def _check_keys(self, keys: Iterable[str]) -> list[str]:
        """Apply ``_check_key`` to every key, the first bad one raising.

        Decided at once on the joined keys when they are plainly valid (the common case), key by key
        otherwise.
        """
        keys = _listed("keys", keys)
        plainly_valid = self._plainly_valid if self._naming is None else self._naming.plainly_valid
        if not plainly_valid(keys):
            for key in keys:
                self._check_key(key)
        return keys

    def _plainly_valid(self, keys: list[str]) -> bool:
        """Tell whether every key passes ``_check_key`` (F2, S5), shown on the keys joined (False: unknown).

        True only when all are str, none empty, ASCII, no ``/``, NUL, altsep or ``.`` at all (so no
        leading dot), and short enough that no escaped name can exceed NAME_MAX.  Each test is one C-level
        pass (single characters are searched with memchr).  On False the caller checks each key.
        """
        try:
            joined = "".join(keys)
        except TypeError:
            return False  # a key that is not a str: _check_key names it
        return (
            all(keys)
            and joined.isascii()
            and "/" not in joined
            and "\0" not in joined
            and "." not in joined
            and (_ALTSEP is None or _ALTSEP not in joined)
            and (not keys or max(map(len, keys)) * 3 + self._suffix_bytes <= NAME_MAX)
        )

    @staticmethod
    def _as_bytes(value: object) -> memoryview:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"value must be bytes, bytearray or memoryview, got {type(value).__name__} {value!r:.100}"
            )
        view = memoryview(value)
        if not view.c_contiguous:
            return memoryview(view.tobytes())  # os.write takes contiguous buffers only: one copy
        return view if view.format == "B" and view.ndim == 1 else view.cast("B")

    @staticmethod
    def _as_writable(buffer: object) -> memoryview:
        try:
            view = memoryview(buffer)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"buffer must be a writable bytes-like object, got {type(buffer).__name__}"
            ) from None
        if view.readonly:
            raise TypeError(f"buffer must be writable, got a read-only {type(buffer).__name__}")
        if not view.c_contiguous:
            raise ValueError(f"buffer must be contiguous, got a non-contiguous {type(buffer).__name__}")
        return view if view.format == "B" and view.ndim == 1 else view.cast("B")

    def _set(self, key: str, view: memoryview) -> bool:
        """``set`` of a checked key: refresh it if it is believed or on disk, else reserve, write, commit."""
        beliefs = self._beliefs
        if beliefs is not None and beliefs.contains(key):
            with self._lock:
                if beliefs.contains(key):  # still: no removal slipped in
                    self._evictor.touch(key)
                    return True
        st = self._probe(key, touch=True)
        if st is not None:
            if not self._trust.is_page(st):
                # S3: a symlink, FIFO, directory or another user's file holds the name: never acknowledge a
                # write that is not stored, and never write through or over what is not ours.
                logger.warning(
                    "file store: %r is a %s of uid %d, not a page: %r not written",
                    self._path(key),
                    st.kind,
                    st.uid,
                    key,
                )
            return self._trust.is_page(st)
        with self._lock:
            admitted = self._evictor.reserve(key, len(view))  # ends the removal its evictions opened
        if not admitted:
            logger.warning("file store: no room for %r (%d bytes): not written", key, len(view))
            return False
        path = self._path(key)
        removals = self._write(key, view, path, self._overlaps.removals)
        with self._lock:
            if removals is None:
                self._evictor.abort(key)
                if beliefs is not None:
                    beliefs.remove(key)
            else:
                self._evictor.commit(key, len(view))  # the size re-adopts the entry if it vanished (C3)
                if not self._overlaps.removal_overlapped(removals):
                    if beliefs is not None:
                        beliefs.add(key)
                elif self._gone(path):
                    # A delete or clear overlapped the write and removed the file it published (it
                    # linearizes after this set): no entry may outlive the file, unless another write of
                    # it is in flight.
                    self._evictor.discard(key)
        return removals is not None

    def _write(self, key: str, view: memoryview, path: str, removals: int) -> int | None:
        """Publish ``view`` at ``path``; on ``ENOSPC`` while writing, evict as for the cap and retry (F3, S8).

        It retries once.  Answers the removals mark the commit is guarded by (``removals``, or the one
        after the relief), or None when nothing was published (every attempt's temp file removed, logged).
        """
        failed, writing = self._write_once(view, path)
        if failed is not None and self._fanout and isinstance(failed, FileNotFoundError):
            # F1-fanout: its subdirectory went (removed by hand, or by another program): made again,
            # retried once.
            self._forget_ready(os.path.dirname(path))
            failed, writing = self._write_once(view, path)
        if failed is not None and writing and failed.errno == errno.ENOSPC:
            # S8: the disk is full while old pages could go: evict as for the cap, retry once.
            with self._lock:
                evicted = self._evictor.relieve(key, len(view))  # ends the removal it opened
                removals = self._overlaps.removals
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
            if self._fanout:
                self._prepare(where)
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
                self._remove_temp(temp)
            return exc, writing
        return None, False

    def _prepare(self, leaf: str) -> None:
        """Make the two subdirectories of ``leaf`` unless this store has made or checked them (F1-fanout).

        Each gets the directory's mode and group; then check what is there (S1's rules: a directory of this
        user, or of the shared group, writable by no one else; never a symlink).  ``PermissionError``
        naming it otherwise: the write is refused (F3).
        """
        parent = os.path.dirname(leaf)
        top = _HEX_INDEX[os.path.basename(parent)]
        index = 256 + top * 256 + _HEX_INDEX[os.path.basename(leaf)]
        if self._ready[index]:
            return
        for slot, directory in ((top, parent), (index, leaf)):
            if not self._ready[slot]:
                st = self._fs.mkdir(directory, self._trust.dir_mode, self._trust.group)
                problem = self._trust.subdir_problem(st)
                if problem is not None:
                    raise PermissionError(errno.EPERM, f"fanout subdirectory {problem}: not used", directory)
                self._ready[slot] = 1

    def _forget_ready(self, leaf: str) -> None:
        parent = os.path.dirname(leaf)
        top = _HEX_INDEX[os.path.basename(parent)]
        self._ready[top] = self._ready[256 + top * 256 + _HEX_INDEX[os.path.basename(leaf)]] = 0

    def _exists(self, key: str) -> bool:
        """``exists`` of a checked key: a live belief answers with no filesystem call, else one ``stat``."""
        beliefs = self._beliefs
        if beliefs is not None and beliefs.contains(key):
            return True
        return self._on_disk(key)

    def _on_disk(self, key: str) -> bool:
        """One ``stat`` of a checked key: True when a page of ours is there (teaching it, C1-guarded)."""
        st = self._probe(key, touch=False)
        return st is not None and self._trust.is_page(st)

    def _read(self, key: str) -> tuple[bytes | None, bool, int, int]:
        """Read a checked key once, as ``_look`` answers (the value, or None); a short read is None.

        Teaches nothing.
        """
        try:
            got, missing, removals, published = self._look(
                key, lambda path: self._fs.read_file(path, self._max_value_size, self._trust.is_page), "read"
            )
        except MemoryError:
            # S4: within max_value_size but more than this process can hold now: an answer, not a raise.
            logger.warning("file store: %r not read: out of memory", self._path(key))
            return None, False, 0, 0
        if got is None:
            return None, missing, removals, published
        size, data = got
        if len(data) != size:
            logger.warning("file store: short read of %r: %d of %d bytes", self._path(key), len(data), size)
            return None, False, removals, published
        return data, False, removals, published

    def _look(self, key: str, call: Callable[[str], _T], verb: str) -> tuple[_T | None, bool, int, int]:
        """Make one filesystem call on a checked key's file, ``call(path)``.

        It comes with the answers to its failures that every probe shares: (its result, or None; whether
        the file is missing or not a page of ours;
        the ``removals`` and ``publications`` marks read before the call, for ``_observe``).  Teaches
        nothing: the caller, which may refuse the result (a short read), teaches with ``_observe``.
        """
        path = self._path(key)
        overlaps = self._overlaps
        removals, published = overlaps.removals, overlaps.publications
        try:
            return call(path), False, removals, published
        except FileNotFoundError:
            return None, True, removals, published
        except NotAPageError as exc:
            logger.warning("file store: %r is not a page of this store, not read: %s", path, exc.strerror)
            return None, True, removals, published
        except FileTooLargeError as exc:
            # S4: refused before allocating; the file and its accounting stay (it is a page of ours).
            logger.warning("file store: %r not read: %s (max_value_size)", path, exc.strerror)
        except OSError as exc:
            # EIO, EACCES, ESTALE...: unavailable, or existence unknown (answered as absent, the
            # conservative answer); the file and its accounting stay.
            logger.warning("file store: cannot %s %r: %s", verb, path, exc)
        return None, False, removals, published

    def _observe(
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
        """Teach what one look at ``key``'s file saw (``_look``'s marks).

        A page ``found`` refreshes its recency and teaches its belief (C1-guarded, ``_learn``); a
        ``missing`` file is forgotten, belief and entry, unless it was published since (F4, C5); anything
        else teaches nothing.
        """
        if missing:
            self._forget_missing(key, published)
        elif found:
            self._learn(key, removals, size, touch=touch)

    def _gone(self, path: str) -> bool:
        """One ``stat``: True only when the file is certainly missing (any other errno: unknown, False)."""
        try:
            self._fs.stat(path)
        except FileNotFoundError:
            return True
        except OSError as exc:
            # EIO, EACCES, ESTALE...: existence unknown; the entry stays (over-counting is the safe side).
            logger.warning("file store: cannot stat %r: %s", path, exc)
        return False

    def _probe(self, key: str, *, touch: bool) -> FileStat | None:
        """One ``stat``: the node's stat (teaching the belief, C1-guarded) or None when missing/unreadable.

        A node that is not a page (S3) is answered as found but teaches nothing: its belief and its
        entry go, as for a missing file, since nothing of this store is on disk under that name.
        """
        st, missing, removals, published = self._look(key, self._fs.stat, "stat")
        size = None if st is None or not touch else st.size
        page = st is not None and self._trust.is_page(st)
        missing = missing or (st is not None and not page)  # S3: nothing of ours under the name
        self._observe(key, page, missing, removals, published, size, touch=touch)
        return st

    def _learn(self, key: str, removals: int, size: int | None, *, touch: bool = True) -> None:
        """Refresh the recency of ``key``, which a probe found, and teach its belief, as C1 allows.

        If a removal overlapped the probe (the epoch was odd or has moved), the
        file it saw may be gone: no belief is taught and no untracked file is
        adopted, but a key still tracked is refreshed (the probe linearizes
        before the removal, which either removed the key or left it alone).
        """
        with self._lock:
            if self._overlaps.removal_overlapped(removals):
                if touch and key in self._evictor:
                    self._evictor.touch(key)
                return
            if touch:
                self._evictor.touch(key, size)
            if self._beliefs is not None:
                self._beliefs.add(key)

    def _learn_many(self, lessons: list[tuple[str, int, int]]) -> None:
        """Apply ``_learn`` to each (key, removals mark, size) in order, under one acquisition of ``_lock``.

        The beliefs are taught in one ``add_many`` (M9).
        """
        if not lessons:
            return
        with self._lock:
            taught = []
            evictor = self._evictor
            overlapped = self._overlaps.removal_overlapped
            for key, removals, size in lessons:
                if overlapped(removals):
                    if key in evictor:
                        evictor.touch(key)
                    continue
                evictor.touch(key, size)
                taught.append(key)
            if self._beliefs is not None and taught:
                self._beliefs.add_many(taught)

    def _forget_missing(self, key: str, published: int) -> None:
        """F4: the file is gone: drop the belief and give its bytes back to the accounting.

        Unless a write of ``key`` was committed since the probe read ``published``:
        the miss is older than that file, which stays believed and tracked (C3, C5).
        """
        with self._lock:
            self._note_gone(key)
            if self._evictor.forget_missing(key, published) and self._beliefs is not None:
                self._beliefs.remove(key)

    def _note_gone(self, key: str) -> None:
        """Note ``key`` gone while a background scan runs: this store removed its file or found it missing.

        The scan never adopts it from its (older) listing (F8-bg; lock held).
        """
        gone = self._scan_gone
        if gone is not None:
            gone.add(key)

    def _on_evict(self, background: bool) -> Callable[[str], object] | None:
        """Drop a victim's belief: what the evictor calls for each victim before its unlink (V6).

        F8-bg: and, while the scan runs, its key is noted gone (``_note_gone``).
        """
        beliefs = self._beliefs
        if not background:
            return None if beliefs is None else beliefs.remove

        note_gone = _weakly(self._note_gone)

        def evicted(key: str) -> None:
            if beliefs is not None:
                beliefs.remove(key)
            note_gone(key)

        return evicted

    def _remove_temp(self, temp: str) -> None:
        try:
            self._fs.unlink(temp)
        except FileNotFoundError:
            pass  # the write failed before creating it
        except OSError as exc:
            # EPERM/EIO...: a leftover temp file; start-up removes it once it is old (F8).
            logger.warning("file store: cannot remove temp file %r: %s", temp, exc)

    def _key_of(self, name: str) -> str | None:
        """Return the key of the node ``name`` when it is named like a file of this namespace (F1), else None.

        A temp file never has one: no key starts with a dot.
        """
        if self._naming is not None:
            return self._naming.key_of(name)
        suffix = self._suffix
        if name.endswith(suffix):
            part = name[: -len(suffix)]
            if part and part[0] != "." and "_" not in part and "%" not in part:
                return part  # the common name: nothing escaped, no other namespace (the first "_" is ours)
        return key_of_name(name, self._namespace)

    def _nodes(self, entries: Iterable[DirEntry]) -> list[tuple[DirEntry, str]]:
        """Every node of a listing named like a file of this namespace, with its key (any kind, any owner)."""
        key_of = self._key_of
        return [(entry, key) for entry in entries if (key := key_of(entry.name)) is not None]

    def _page_nodes(self) -> tuple[list[tuple[str, DirEntry, str]], int]:
        """List the files of this namespace where its keys' probes look (F7).

        Answers (every node named like a file of this namespace where its key's probes look, as (the
        directory it is in, its entry, its key); how many subdirectories could not be listed).  The
        directory itself once (flat), or every trusted subdirectory of both levels (fanout, F1-fanout: a page
        that does not hash where it lies is not ours to remove).  OSError when the directory itself
        cannot be listed.
        """
        directory, fs = self._directory, self._fs
        if not self._fanout:
            return [(directory, entry, key) for entry, key in self._nodes(fs.scandir(directory))], 0
        found: list[tuple[str, DirEntry, str]] = []
        unlisted = 0
        for level1 in fs.scandir(directory):
            if (
                level1.kind != "dir"
                or level1.name not in _HEX_INDEX
                or not self._trust.trusted_subdir(directory, level1)
            ):
                continue
            path1 = os.path.join(directory, level1.name)
            try:
                for level2 in fs.scandir(path1):
                    if level2.kind != "dir" or level2.name not in _HEX_INDEX:
                        continue
                    if not self._trust.trusted_subdir(path1, level2):
                        continue
                    place = (level1.name, level2.name)
                    path2 = os.path.join(path1, level2.name)
                    found += [
                        (path2, e, k)
                        for e, k in self._nodes(fs.scandir(path2))
                        if fanout_dirs(e.name) == place
                    ]
            except OSError as exc:
                logger.warning(
                    "file store: cannot list the fanout subdirectory %r to clear it: %s", path1, exc
                )
                unlisted += 1
        return found, unlisted

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

    def _start(self) -> None:
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
        if self._fanout:
            self._scan_fanout(top, found, now)
        elif self._scan(self._directory, top, found, now, None):
            raise ValueError(
                f"namespace {self._namespace!r} of storage directory {self._directory} was written with"
                f" layout 'fanout' (its marker {self.layout_marker} is there), but this store's layout is"
                " 'flat' (setting layout, HICACHE_FILE_LAYOUT): open it with layout='fanout', or remove the"
                " marker once no page of the namespace is left in its subdirectories"
            )
        self._warn_skipped(found.skipped)
        order = _oldest_first(found.mtimes)
        keys = list(map(found.keys.__getitem__, order))
        sizes = list(map(found.sizes.__getitem__, order))
        del order
        with self._lock:
            self._evictor.adopt_many(zip(keys, sizes, strict=True), sum(sizes))
            del keys, sizes
            if self._beliefs is not None:
                # All born now, so in the listing's order: the keys' objects are met in the order they
                # were made (at a million pages, far apart in memory in any other order).
                self._beliefs.add_many(found.keys)
            del found
            if not self._evictor.evict():  # ends the removal its evictions opened
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

    # -- F8-bg: the start-up scan in the background -----------------------------

    _scan_batch: int = 4096  # F8-bg: listing entries per batch (a test's subclass may take fewer)
    _scan_thread: bool = True  # F8-bg: False (a test's subclass): no thread, the test calls _scan_step

    def _begin_scan(self) -> None:
        """Begin the background scan (F8-bg).

        Begin the listing (a directory that cannot be listed raises ``OSError`` here), tell the layouts
        apart (F1-fanout), then leave the rest to ``_scan_step``, on a daemon thread.
        """
        fs, directory = self._fs, self._directory
        now = fs.now()
        listings: Iterator[tuple[str, Iterator[DirEntry] | list[DirEntry], tuple[str, str] | None]]
        if self._fanout:
            listings = self._fanout_leaves(self._fanout_top(fs.scandir(directory), now))
        else:
            self._refuse_a_fanout_marker()
            top = iter(fs.scandir(directory))
            first = next(top, None)  # the listing has begun: opened, its first entry read
            entries = top if first is None else chain((first,), top)
            listings = iter(((directory, entries, None),))
        with self._lock:
            self._evictor.adopt_many(())  # the publication every page the scan adopts is held with (F4)
            self._scan_gone = set()
            self._scanning = scan = _Scan(listings, now)
        if self._scan_thread:
            scan.thread = threading.Thread(
                target=self._scan_in_background, name=f"hicache-scan{self._namespace}", daemon=True
            )
            scan.thread.start()

    def _refuse_a_fanout_marker(self) -> None:
        """Refuse, in a flat store, a directory holding its namespace's fanout marker (F1-fanout, F8-bg).

        One ``stat``: the listing is read later.
        """
        try:
            self._fs.stat(self.layout_marker)
        except FileNotFoundError:
            return
        except OSError as exc:
            # EACCES, EIO...: the marker cannot be looked for; the layouts are not told apart (logged).
            logger.warning("file store: cannot look for the layout marker %r: %s", self.layout_marker, exc)
            return
        raise ValueError(
            f"namespace {self._namespace!r} of storage directory {self._directory} was written with"
            f" layout 'fanout' (its marker {self.layout_marker} is there), but this store's layout is"
            " 'flat' (setting layout, HICACHE_FILE_LAYOUT): open it with layout='fanout', or remove the"
            " marker once no page of the namespace is left in its subdirectories"
        )

    def _scan_in_background(self) -> None:
        try:
            while self._scan_step():
                pass
        except Exception:  # a bug, not I/O (which each step answers): the scan ends, the store serves on
            logger.exception(
                "file store: the start-up scan of %r failed; the pages it has not adopted stay unknown"
                " until a probe finds them",
                self._directory,
            )
            scan = self._scanning
            if scan is not None:
                self._end_scan(scan)

    def _scan_step(self) -> bool:
        """Run one batch of the background scan (F8-bg).

        Up to ``_scan_batch`` entries of the listing are read and their old temp files removed (outside
        the lock), then their pages adopted (``_adopt_scanned``).
        True while the listing has more; False once the scan has ended (this step ended it, or it had).
        """
        scan = self._scanning
        if scan is None or scan.stop:
            return False
        found = _Found()
        want = self._scan_batch
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
        self._adopt_scanned(scan, found)
        if want > 0:
            self._end_scan(scan)
            return False
        return True

    def _adopt_scanned(self, scan: _Scan, found: _Found) -> None:
        """Adopt a batch's pages as the least recently used entries, oldest first, each believed (F8-bg).

        Ties stay in the listing's order; a key tracked already or noted gone is not adopted; then the
        limits are enforced on what is known (a warning, once, when they cannot be met).
        """
        keys, sizes = found.keys, found.sizes
        order = _oldest_first(found.mtimes)
        with self._lock:
            gone = self._scan_gone
            if gone is None:
                return  # the scan was stopped meanwhile (close)
            pairs = [(keys[i], sizes[i]) for i in order if keys[i] not in gone]
            adopted = self._evictor.adopt_least_recent(pairs)
            if self._beliefs is not None and adopted:
                self._beliefs.add_many(adopted)
            if self._evictor.enabled and not self._evictor.evict() and not scan.warned:
                scan.warned = True
                logger.warning(
                    "file store: %r is over its limits and nothing more of what is known can be evicted;"
                    " the start-up scan goes on (the namespace may exceed the cap by the bytes not scanned)",
                    self._directory,
                )

    def _end_scan(self, scan: _Scan) -> None:
        """End the scan (ended or stopped, F8-bg).

        Nothing more is noted gone, its S3 warnings are logged, start-up is complete.
        """
        with self._lock:
            if self._scanning is not scan:
                return
            self._scanning = None
            self._scan_gone = None
        closing = getattr(scan.listings, "close", None)
        if closing is not None:
            closing()  # a listing stopped midway lets go of its directory now
        listing = scan.listing
        if listing is not None:
            closing = getattr(listing[1], "close", None)
            if closing is not None:
                closing()
        self._warn_skipped(scan.skipped)
        self._started.set()

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
        was met.
        """
        # _key_of's common name is written out here, so that start-up makes no call per page for it
        # (docs/SEMANTICS.md "F8 at scale").  A subclass that overrides it has its own called for every
        # entry instead.
        suffix, cut, namespace = self._suffix, -len(self._suffix), self._namespace
        own = self._naming is not None or type(self)._key_of is not HiCacheFile._key_of
        key_of, is_page = self._key_of, self._trust.is_page
        add_key, add_mtime, add_size = found.keys.append, found.mtimes.append, found.sizes.append
        share = found.shared.setdefault
        skipped = found.skipped
        marker = os.path.basename(self.layout_marker)
        met = False
        for entry in entries:
            name, size, mtime, kind, _, _, _ = entry
            if own:
                key = key_of(name)
            else:
                key = name[:cut] if name.endswith(suffix) else None
                if key is not None and (not key or key[0] == "." or "_" in key or "%" in key):
                    key = key_of_name(name, namespace)
            if key is None:
                if is_temp_name(name):
                    self._sweep(where, entry, now)
                elif name == marker:
                    met = True
            elif place is not None and fanout_dirs(name) != place:
                skipped["misplaced"] = skipped.get("misplaced", 0) + 1  # not where its key's probes look
            elif is_page(entry):  # S3
                add_key(key)
                add_mtime(mtime)
                add_size(share(size, size))
            else:
                kind = kind if kind != "file" else "file of another user"
                skipped[kind] = skipped.get(kind, 0) + 1
        return met

    def _sweep(self, where: str, entry: DirEntry, now: float) -> None:
        """F8, S6: remove the temp file ``entry`` of ``where`` when it is ours and older than temp_max_age."""
        if (
            entry.kind == "file"
            and entry.uid == self._trust.euid
            and now - entry.mtime > self._config.temp_max_age
        ):
            self._remove_temp(os.path.join(where, entry.name))

    def _scan_fanout(self, top: Iterable[DirEntry], found: _Found, now: float) -> None:
        """Yield the listings of a fanout store (F1-fanout).

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
        directory, key_of = self._directory, self._key_of
        first: list[DirEntry] = []
        flat_pages = 0
        marked = False
        for entry in top:
            name = entry.name
            if entry.kind == "dir" and name in _HEX_INDEX:
                first.append(entry)
            elif key_of(name) is not None:
                flat_pages += self._trust.is_page(entry)
            elif name == os.path.basename(self.layout_marker):
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
        """Yield the second-level subdirectories under the trusted ones of ``first`` (F1-fanout).

        Each as (path, its listing, its place), trusted only, each checked as it is met and marked
        ready.  A leaf's listing is
        read whole (a few hundred entries even at millions of pages), so that a failure to list anything
        under a first-level subdirectory is met here: logged, and the rest of it skipped.
        """
        directory = self._directory
        for level1 in first:
            if not self._trust.trusted_subdir(directory, level1):
                continue
            path1 = os.path.join(directory, level1.name)
            self._ready[_HEX_INDEX[level1.name]] = 1
            try:
                for level2 in self._fs.scandir(path1):
                    if level2.kind != "dir" or level2.name not in _HEX_INDEX:
                        continue
                    if not self._trust.trusted_subdir(path1, level2):
                        continue
                    path2 = os.path.join(path1, level2.name)
                    self._ready[256 + _HEX_INDEX[level1.name] * 256 + _HEX_INDEX[level2.name]] = 1
                    yield path2, list(self._fs.scandir(path2)), (level1.name, level2.name)
            except OSError as exc:
                # EACCES, EIO...: the pages under it stay unknown (not counted, not evicted) until a restart.
                logger.warning("file store: cannot list the fanout subdirectory %r: %s", path1, exc)

    def _mark_fanout(self) -> None:
        """F1-fanout: leave the marker by which a flat store refuses this namespace (never followed: S2)."""
        try:
            self._fs.write_new(self.layout_marker, memoryview(b""), self._trust.file_mode)
        except FileExistsError:
            pass  # made meanwhile by another fanout store of the namespace
        except OSError as exc:
            # EACCES, EROFS...: a flat store would not know; the fanout store works all the same.
            logger.warning("file store: cannot make the layout marker %r: %s", self.layout_marker, exc)


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


def _oldest_first(mtimes: array[float]) -> list[int]:
    """Return the indices of a listing's pages oldest mtime first, ties in the listing's order (F8).

    One stable sort of the indices by time, its key function and comparisons in C; the engine's evictor
    keeps ties in the listing's order too.
    """
    return sorted(range(len(mtimes)), key=mtimes.__getitem__)
