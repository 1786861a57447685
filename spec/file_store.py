"""Executable model of the file store and its evictor (docs/SEMANTICS.md F1-F8, V1-V6, C1-C4).

The state: the directory (``files``, name -> (bytes, mtime), every file of it, this namespace's or not;
``planted``, the nodes named like files that are not pages, S3), the evictor's entries (inherited from
:class:`spec.file_evictor.EvictorModel`) and ``beliefs`` (key -> birth, :mod:`spec.metadata_cache`).  The
world is beside it: armed faults are read from a ledger (``faults``, as ``reader``), each victim tried is
told to ``on_evict`` (V6), other processes change the directory between operations.  The pure functions
it applies carry CrossHair's contracts in :mod:`spec.file_names`.  It also runs as a target of its own
machines (tests/stateful).

Where docs/SEMANTICS.md leaves a choice open, the model fixes it:

* ``exists`` that finds the file missing drops the evictor's entry too (as ``get`` must, F4).
* A ``set`` of a believed key refreshes recency without a ``stat`` (F6, F3).
* ``delete`` answers True when the file is gone afterwards; ``clear`` True when every file of the
  namespace was removed; it keeps the ones it could not remove tracked (their bytes are on disk: C3).
* Start-up orders files by (mtime, name) and gives every belief the same birth.
* V3-bg (``background``): start-up runs no pass; the files found wait for the first one.
* S8: ``ENOSPC`` on the temp file's write (not the rename) is pressure when eviction is on: evict as
  :func:`~spec.file_names.cap_pass` with a cap of the other entries' bytes, and retry the write once if
  that evicted anything.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable, MutableMapping
from itertools import takewhile
from typing import Protocol

from spec import metadata_cache as beliefs_model
from spec.file_evictor import RETRY_UNREMOVABLE_AFTER, EvictorModel
from spec.file_names import file_path, key_of_path, pages, stale_temps

__all__ = ["RETRY_UNREMOVABLE_AFTER", "Faults", "FileStoreModel"]


class Faults(Protocol):
    """The world's faults as the model reads them (:class:`spec.fake_fs.FaultLedger` is one)."""

    def take(self, op: str, reader: str) -> int | None: ...  # write, replace, read, short: the errno

    def stuck(self, path: str) -> bool: ...  # the unlink of ``path`` fails


class FileStoreModel(EvictorModel):
    """The store's model; mirrors ``HiCacheFile``'s operations, and the evictor's (inherited).

    ``cap``, ``ratio``, ``min_free``, ``commit_moves``, ``own_counted`` and ``background`` are the evictor's
    (:class:`~spec.file_evictor.EvictorModel`); ``disk_size`` is the fake disk, ``metadata`` whether beliefs
    are kept, ``ttl`` their lifetime; ``directory`` is where ``faults`` finds this model's paths.  ``files``
    and ``planted`` (S3: name -> (kind: symlink, fifo, dir (cannot be unlinked: EISDIR) or other (another
    user's file); bytes on the disk)) may be given: a view of a fake filesystem, then the model is a store.
    No validation: the machine passes what the store accepted.
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
        background: bool = False,
        layout: str = "flat",
    ) -> None:
        super().__init__(cap, ratio, min_free, clock, on_evict, commit_moves, own_counted, background)
        self.layout = layout
        self.namespace, self.directory, self.faults, self.reader = namespace, directory, faults, reader
        self.metadata, self.ttl, self.temp_max_age, self.disk_size = metadata, ttl, temp_max_age, disk_size
        self.files = {} if files is None else files
        self.planted = {} if planted is None else planted
        self.beliefs: beliefs_model.Births = {}

    def name(self, key: str) -> str:
        """Where ``key``'s file lies, relative to the directory (F1, F1-fanout)."""
        return file_path(key, self.namespace, self.layout)

    def key_of(self, name: str) -> str | None:
        return key_of_path(name, self.namespace, self.layout)

    @property
    def marker(self) -> str:
        """F1-fanout: the fanout layout's marker, in the directory itself."""
        return f".hicache{self.namespace}.fanout"

    def free(self) -> int:
        used = sum(len(d) for d, _m in self.files.values()) + sum(n for _k, n in self.planted.values())
        return max(self.disk_size - used, 0)

    def believed(self, key: str) -> bool:
        return self.metadata and beliefs_model.contains(self.beliefs, key, self.clock(), self.ttl)

    def size_on_disk(self, key: str) -> int | None:
        file = self.files.get(self.name(key))
        return None if file is None else len(file[0])

    def unremovable(self, key: str) -> bool:
        return self.stuck(self.name(key))

    def remove(self, key: str) -> bool:
        self.forget(key)
        return self._unlink(self.name(key))

    def stuck(self, name: str) -> bool:
        """The node ``name`` cannot be unlinked: a fault says so, or it is a planted directory (EISDIR)."""
        if self.planted.get(name, ("", 0))[0] == "dir":
            return True
        return self.faults is not None and self.faults.stuck(f"{self.directory}/{name}")

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
        found = pages(self.files, self.namespace, self.layout)
        kept = [(k, n) for _m, name, k, n in found if not self._unlink(name)]
        left = sum(not self._unlink(n) for n in list(self.planted) if self.key_of(n) is not None)
        self.forget_committed()
        for key, size in kept:
            self.touch(key, size)
        return not kept and not left

    def batch_exists(self, keys: Iterable[str]) -> int:
        return sum(1 for _key in takewhile(self.exists, keys))

    def restart(self) -> None:
        """F8 (a new store on the same directory): stale temps removed, files seeded oldest first."""
        for name in stale_temps(self.files, self.clock(), self.temp_max_age, self.layout):
            self._unlink(name)
        if self.layout == "fanout" and self.marker not in self.files and self._fault("write") is None:
            self.files[self.marker] = (b"", self.clock())  # F1-fanout: made once, when missing
        self.beliefs, self.writers, self.published, self.resting = {}, {}, set(), {}
        self.lru = [
            (key, size, False) for _m, _n, key, size in pages(self.files, self.namespace, self.layout)
        ]
        for key, _size, _flying in self.lru:
            self.teach(key)
        if self.background:  # V3-bg: no pass in the constructor; the first pass brings the files found down
            self.pass_left, self.since_pass = sum(e[1] for e in self.lru), 0
        else:
            self.evict()

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

    def teach(self, key: str) -> None:
        if self.metadata:
            self.beliefs = beliefs_model.add(self.beliefs, key, self.clock(), self.ttl, None)[0]

    def forget(self, key: str) -> None:
        self.beliefs = beliefs_model.remove(self.beliefs, key)

    def missing(self, key: str) -> None:
        """F4: the file is gone: no belief, and its bytes go back to the accounting."""
        self.forget(key)
        self.discard(key)
