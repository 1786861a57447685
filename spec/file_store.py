"""Executable model of the file store and its evictor (docs/SEMANTICS.md F1-F8, V1-V6, C1-C4).

The whole state is three small things:

* the directory: ``files``, name -> (bytes, mtime): this namespace's files,
  other namespaces' files and leftover temp files alike, and ``planted``, the
  nodes named like files that are not pages (S3);
* ``lru``: the evictor's entries ``(key, size, in_flight)``, least recently
  used first (its total is the sum of the sizes: C3), with ``writers``, the
  writes of each key in flight (C5: two at once), ``published`` the keys one
  of whose writes in flight published already, and ``resting`` (S7);
* ``beliefs``: key -> birth, read through :mod:`spec.metadata_cache`.

The world is beside it, not in it: the faults armed on the filesystem are read
from a ledger (``faults``, such as :class:`spec.fake_fs.FaultLedger`, read as
``reader``), each victim tried is told to ``on_evict`` (V6), and other processes
change the directory between operations.  The pure functions below carry PEP
316 contracts for CrossHair; the class applies them, one operation at a time
(it is also run as a target of its own machines: tests/stateful).

Where docs/SEMANTICS.md leaves a choice open, the model fixes it:

* ``exists`` that finds the file missing also drops the evictor's entry (as
  ``get`` must, F4): a file removed behind the store's back is refunded
  whichever query notices it first.
* A ``set`` of a believed key refreshes recency without a ``stat`` (F6, F3).
* ``delete`` answers True when the file is gone afterwards; ``clear`` answers
  True when every file of the namespace was removed, and keeps the ones it
  could not remove tracked (their bytes are still on disk: C3).
* Start-up orders files by (mtime, name) and gives every belief the same birth.
* S7: a victim whose unlink failed rests for ``RETRY_UNREMOVABLE_AFTER`` (30 s) of
  the clock: no pass tries it (no ``on_evict``) until then.  The rest belongs to
  the entry: a new write of the key, or the entry dropped, forgets it.
* S8: an ``ENOSPC`` on the temp file's write (not on the rename) is pressure
  when eviction is on: evict as :func:`cap_pass` with a cap of the bytes the
  other entries hold, and retry the write once if that evicted anything.
"""

from __future__ import annotations

import errno
import math
import re
from collections.abc import Callable, Iterable, MutableMapping
from typing import Protocol

from spec import metadata_cache as beliefs_model

__all__ = [
    "RETRY_UNREMOVABLE_AFTER",
    "Entry",
    "Faults",
    "FileStoreModel",
    "cap_pass",
    "file_name",
    "is_temp",
    "key_of",
    "same_file",
    "space_pass",
    "total",
]

Entry = tuple[str, int, bool]  # key, size in bytes, in flight
RETRY_UNREMOVABLE_AFTER = 30.0  # S7: seconds a victim that could not be unlinked is left alone


def file_name(key: str, ns: str) -> str:
    """F1: the file of ``key`` in namespace ``ns``: ``<key><ns>.bin``, the key's ``%`` and ``_`` escaped.

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: ns == "" or ns.startswith("_")
    post: __return__.endswith(ns + ".bin")
    post: key_of(__return__, ns) == key
    """
    return key.replace("%", "%25").replace("_", "%5F") + ns + ".bin"


def key_of(name: str, ns: str) -> str | None:
    """F1: the key whose file is ``name`` in namespace ``ns`` (it starts at the first ``_``), or None.

    pre: ns == "" or ns.startswith("_")
    post: __return__ is None or file_name(__return__, ns) == name
    """
    stem, dot_bin = name[:-4], name[-4:]
    part, mark, rest = stem.partition("_")
    if dot_bin != ".bin" or not part or part[0] == "." or mark + rest != ns:
        return None
    key = "%".join(piece.replace("%5F", "_") for piece in part.split("%25"))
    return key if "/" not in key and "\0" not in key and file_name(key, ns) == name else None


def same_file(key: str, ns: str, other_key: str, other_ns: str) -> bool:
    """F1: two stores name the same file only for the same key in the same namespace.

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: other_key != "" and not other_key.startswith(".")
    pre: "/" not in other_key and chr(0) not in other_key
    pre: ns == "" or ns.startswith("_")
    pre: other_ns == "" or other_ns.startswith("_")
    post: not __return__ or (key == other_key and ns == other_ns)
    """
    return file_name(key, ns) == file_name(other_key, other_ns)


_TEMP = re.compile(r"\.[0-9a-f]{12}\.tmp")


def is_temp(name: str) -> bool:
    """F8, S6: a temp file of the store is named exactly ``.<12 lower-case hex digits>.tmp``."""
    return _TEMP.fullmatch(name) is not None


def total(lru: list[Entry]) -> int:
    """V2, C3: the evictor's total is the sum of the tracked sizes.

    post: __return__ == sum(e[1] for e in lru)
    """
    return sum(size for _key, size, _in_flight in lru)


def _evictable(entry: Entry, keep: str | None, resting: frozenset[str]) -> bool:
    return not entry[2] and entry[0] != keep and entry[0] not in resting


def cap_pass(
    lru: list[Entry],
    keep: str | None,
    size: int,
    cap: int,
    ratio: float,
    unremovable: frozenset[str],
    resting: frozenset[str] = frozenset(),
) -> tuple[list[Entry], list[str]]:
    """V3, V5: evict LRU entries until the others fit under floor(cap * ratio) - size.

    Returns the entries left and the victims tried, in order (each one got
    ``on_evict``, V6).  ``keep`` (the key being written), writes in flight and
    resting keys (S7) are never victims; an unremovable victim is tried once
    and keeps its entry.

    pre: 0 < cap < 2**52 and 0 < ratio <= 1 and size >= 0
    pre: all(e[1] >= 0 for e in lru) and len({e[0] for e in lru}) == len(lru)
    post: all(e in lru for e in __return__[0])
    post: not any(e[2] or e[0] == keep or e[0] in resting for e in lru if e[0] in __return__[1])
    post: all(e in __return__[0] for e in lru if e[0] in unremovable or e[2])
    post: len(__return__[0]) + len([k for k in __return__[1] if k not in unremovable]) == len(lru)
    """
    others = total(lru) - sum(e[1] for e in lru if e[0] == keep)
    target = math.floor(cap * ratio) - size
    left: list[Entry] = []
    tried: list[str] = []
    for entry in lru:
        if others > target and _evictable(entry, keep, resting):
            tried.append(entry[0])
            if entry[0] not in unremovable:
                others -= entry[1]
                continue
        left.append(entry)
    return left, tried


def space_pass(
    lru: list[Entry],
    keep: str | None,
    size: int,
    floor: int,
    free: int,
    unremovable: frozenset[str],
    resting: frozenset[str] = frozenset(),
) -> tuple[list[Entry], list[str]]:
    """V3, V5: evict LRU entries until the estimated free space minus size reaches the floor.

    The estimate grows by each victim's size (the caller re-probes the real
    free space afterwards).  Same victims rules as :func:`cap_pass`.

    pre: floor > 0 and size >= 0
    pre: all(e[1] >= 0 for e in lru) and len({e[0] for e in lru}) == len(lru)
    post: all(e in lru for e in __return__[0])
    post: not any(e[2] or e[0] == keep or e[0] in resting for e in lru if e[0] in __return__[1])
    post: all(e in __return__[0] for e in lru if e[0] in unremovable or e[2])
    """
    left: list[Entry] = []
    tried: list[str] = []
    for entry in lru:
        if free - size < floor and _evictable(entry, keep, resting):
            tried.append(entry[0])
            if entry[0] not in unremovable:
                free += entry[1]
                continue
        left.append(entry)
    return left, tried


class Faults(Protocol):
    """The world's faults as the model reads them (:class:`spec.fake_fs.FaultLedger` is one)."""

    def take(self, op: str, reader: str) -> int | None: ...  # write, replace, read, short: the errno

    def stuck(self, path: str) -> bool: ...  # the unlink of ``path`` fails


class FileStoreModel:
    """The store's model; mirrors ``HiCacheFile``'s operations, and the evictor's (V: reserve ... evict).

    ``cap``/``ratio``/``min_free`` are the evictor's limits, ``disk_size`` the
    fake disk, ``metadata`` whether beliefs are kept, ``ttl`` their lifetime;
    ``directory`` is where ``faults`` finds this model's paths.  ``files`` and
    ``planted`` may be given (a view of a fake filesystem: then the model is a
    store).  No validation: the machine passes what the store accepted.
    """

    def __init__(
        self,
        *,
        namespace: str,
        cap: int,
        ratio: float,
        min_free: int,
        disk_size: int,
        metadata: bool,
        ttl: float,
        temp_max_age: float,
        clock: Callable[[], float],
        on_evict: Callable[[str], object] = lambda key: None,
        faults: Faults | None = None,
        reader: str = "model",
        directory: str = "",
        files: MutableMapping[str, tuple[bytes, float]] | None = None,
        planted: MutableMapping[str, tuple[str, int]] | None = None,
        commit_moves: bool = True,
        own_counted: bool = False,
    ) -> None:
        self.namespace, self.directory, self.faults, self.reader = namespace, directory, faults, reader
        self.cap, self.ratio, self.min_free, self.disk_size = cap, ratio, min_free, disk_size
        self.metadata, self.ttl, self.temp_max_age, self.clock = metadata, ttl, temp_max_age, clock
        self.on_evict = on_evict
        # O3 (the evictor's machine): whether commit makes the key the most recently used (V4 leaves it
        # open), and whether a reservation counts the key's own earlier entry against the limits, and may
        # evict it (V3's "total + n" read literally), or leaves it out (the default)
        self.commit_moves, self.own_counted = commit_moves, own_counted
        self.files = {} if files is None else files
        # S3: kind (symlink, fifo, dir, other = another user's file) and bytes on the disk; a ``dir``
        # cannot be unlinked (EISDIR)
        self.planted = {} if planted is None else planted
        self.lru: list[Entry] = []
        self.writers: dict[str, int] = {}
        self.published: set[str] = set()
        self.resting: dict[str, float] = {}  # S7: key -> end of its rest
        self.beliefs: beliefs_model.Births = {}

    # -- observations ------------------------------------------------------

    def name(self, key: str) -> str:
        return file_name(key, self.namespace)

    def key_of(self, name: str) -> str | None:
        return key_of(name, self.namespace)

    def free(self) -> int:
        used = sum(len(d) for d, _m in self.files.values()) + sum(n for _k, n in self.planted.values())
        return max(self.disk_size - used, 0)

    def believed(self, key: str) -> bool:
        return self.metadata and beliefs_model.contains(self.beliefs, key, self.clock(), self.ttl)

    def stuck(self, name: str) -> bool:
        """The node ``name`` cannot be unlinked: a fault says so, or it is a planted directory (EISDIR)."""
        if self.planted.get(name, ("", 0))[0] == "dir":
            return True
        return self.faults is not None and self.faults.stuck(f"{self.directory}/{name}")

    # -- the store's operations (F3-F8) ------------------------------------

    def exists(self, key: str) -> bool:
        if self.believed(key):
            return True
        if self.name(key) in self.files:
            self.teach(key)
            return True
        self.missing(key)
        return False

    def get(self, key: str, buffer_size: int | None = None) -> bytes | None:
        """``get``, or with ``buffer_size`` the bytes ``get_into`` fills (None: it answers False)."""
        if self._fault("read") is not None:
            return None
        file = self.files.get(self.name(key))
        if file is None:
            self.missing(key)
            return None
        data = file[0]
        if buffer_size is not None and buffer_size != len(data):
            return None
        if self._fault("short") is not None and len(data) // 2 != len(data):
            return None
        self.touch(key, len(data))
        self.teach(key)
        return data

    def set(self, key: str, value: bytes) -> bool:
        if self.believed(key):
            self.touch(key)
            return True
        if self.name(key) in self.files:
            self.teach(key)
            self.touch(key)
            return True
        self.missing(key)
        if self.name(key) in self.planted or not self.reserve(key, len(value)):
            return False  # S3: never written through or over a node that is not a page
        code = self._write(value)
        if code == errno.ENOSPC and self._relieve(key, len(value)):
            code = self._write(value)  # S8: once, after the pressure eviction freed something
        if code is not None or self._fault("replace") is not None:
            self.abort(key)
            self.forget(key)
            return False
        self.files[self.name(key)] = (bytes(value), self.clock())
        self.commit(key)
        self.teach(key)
        return True

    def delete(self, key: str) -> bool:
        self.forget(key)
        if self.stuck(self.name(key)):
            return False
        self._unlink(self.name(key))
        self.discard(key)
        return True

    def clear(self) -> bool:
        self.beliefs = {}
        kept = [(key, size) for _m, name, key, size in self._scan() if not self._unlink(name)]
        left = sum(not self._unlink(n) for n in list(self.planted) if self.key_of(n) is not None)
        self.forget_committed()
        for key, size in kept:
            self.touch(key, size)
        return not kept and not left

    def batch_exists(self, keys: Iterable[str]) -> int:
        count = 0
        for key in keys:
            if not self.exists(key):
                break
            count += 1
        return count

    def restart(self) -> None:
        """F8 (a new store on the same directory): stale temps removed, files seeded oldest first."""
        now = self.clock()
        for name, (_data, mtime) in list(self.files.items()):
            if is_temp(name) and now - mtime > self.temp_max_age:
                self._unlink(name)
        self.lru, self.beliefs, self.writers, self.published, self.resting = [], {}, {}, set(), {}
        for _mtime, _name, key, size in self._scan():
            self.lru.append((key, size, False))
            self.teach(key)
        self.evict()

    # -- the evictor's operations (V3-V6) ------------------------------------

    def reserve(self, key: str, size: int) -> bool:
        if (self.cap > 0 or self.min_free > 0) and not self._make_room(key, size):
            return False
        self.writers[key] = self.writers.get(key, 0) + 1  # C5: maybe a second write of key in flight
        self.lru = [e for e in self.lru if e[0] != key] + [(key, size, True)]
        self.resting.pop(key, None)  # a new entry: the old one's rest is over (S7)
        return True

    def commit(self, key: str) -> None:
        """V4: no longer in flight (unless another write of it is, C5), most recently used."""
        more = self.writers.pop(key, 1) - 1
        if more:
            self.writers[key] = more
            self.published.add(key)
        else:
            self.published.discard(key)
        if self.commit_moves:
            mine = [(k, s, more > 0) for k, s, _f in self.lru if k == key]
            self.lru = [e for e in self.lru if e[0] != key] + mine
        else:  # the key keeps the place its reservation gave it
            self.lru = [(k, s, more > 0 if k == key else f) for k, s, f in self.lru]

    def abort(self, key: str) -> None:
        """V4: the entry goes, unless another write of it is in flight or has published it (C5)."""
        more = self.writers.pop(key, 1) - 1
        if more:
            self.writers[key] = more
        elif key in self.published:
            self.published.discard(key)
            self.lru = [(k, s, f and k != key) for k, s, f in self.lru]
        else:
            self.lru = [e for e in self.lru if e[0] != key]
            self.resting.pop(key, None)

    def touch(self, key: str, size: int | None = None) -> bool:
        """V4: most recently used; an untracked file is adopted with its real size."""
        mine = [e for e in self.lru if e[0] == key]
        if not mine:
            if size is None:
                file = self.files.get(self.name(key))
                if file is None:
                    return False
                size = len(file[0])
            mine = [(key, size, False)]
        self.lru = [e for e in self.lru if e[0] != key] + mine
        return True

    def discard(self, key: str) -> bool:
        before = len(self.lru)
        self.lru = [e for e in self.lru if e[0] != key or e[2]]
        if len(self.lru) < before:
            self.resting.pop(key, None)
        return len(self.lru) < before

    def evict(self) -> bool:
        return not (self.cap > 0 or self.min_free > 0) or self._make_room(None, 0)

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
        return frozenset(e[0] for e in self.lru if self.stuck(self.name(e[0]))), frozenset(resting)

    def _apply(self, left: list[Entry], tried: list[str]) -> None:
        """V6: each victim loses its belief before its unlink; removable ones lose their file; S7: an
        unremovable one rests."""
        for key in tried:
            self.on_evict(key)
            self.forget(key)
            if self._unlink(self.name(key)):
                self.resting.pop(key, None)
            else:
                self.resting[key] = self.clock() + RETRY_UNREMOVABLE_AFTER
        self.lru = left

    # -- the world and the beliefs -----------------------------------------------

    def _fault(self, op: str) -> int | None:
        return None if self.faults is None else self.faults.take(op, self.reader)

    def _write(self, value: bytes) -> int | None:
        """A temp file's write: the errno it fails with (armed, or ENOSPC: no room), or None."""
        code = self._fault("write")
        return code if code is not None else errno.ENOSPC if len(value) > self.free() else None

    def _unlink(self, name: str) -> bool:
        """The node ``name`` removed (unlink removes the node itself, S3); False: it cannot be."""
        if self.stuck(name):
            return False
        self.files.pop(name, None)
        self.planted.pop(name, None)
        return True

    def _scan(self) -> list[tuple[float, str, str, int]]:
        found = ((m, n, self.key_of(n), len(d)) for n, (d, m) in self.files.items())
        return sorted((m, n, k, size) for m, n, k, size in found if k is not None)

    def teach(self, key: str) -> None:
        if self.metadata:
            self.beliefs = beliefs_model.add(self.beliefs, key, self.clock(), self.ttl, None)[0]

    def forget(self, key: str) -> None:
        self.beliefs = beliefs_model.remove(self.beliefs, key)

    def missing(self, key: str) -> None:
        """F4: the file is gone: no belief, and its bytes go back to the accounting."""
        self.forget(key)
        self.discard(key)
