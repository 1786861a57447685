"""Executable model of the file store and its evictor (docs/SEMANTICS.md F1-F8, V1-V6, C1-C4).

The state: the directory (``files``, name -> (bytes, mtime); ``planted``, nodes named like files that are
not pages, S3), the evictor's entries (:class:`.file_evictor.EvictorModel`), ``beliefs`` (key -> birth,
:mod:`.metadata_cache`) and the start-up ``listing``.  The world: faults from a ledger (``faults``, as
``reader``), victims told to ``on_evict`` (V6), other processes.  Contracts: :mod:`spec.models.file_names`.
Choices left open: ``exists`` finding the file missing drops its entry too (F4); a ``set`` of a believed
key refreshes recency with no ``stat`` (F6, F3); ``delete`` is True when the file is gone after it,
``clear`` when every file went (the others stay tracked: C3); start-up orders by mtime, ties in listing
order, beliefs born at once; V3-bg (``background``): no pass; F8-bg (flat): ``scan_step`` reads ``scan_batch``
nodes of the construction's listing; S8: ``ENOSPC`` writing a temp file is pressure (a cap pass, one retry).
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable, MutableMapping
from itertools import takewhile

from . import file_names
from . import metadata_cache as beliefs_model
from .file_evictor import RETRY_UNREMOVABLE_AFTER, EvictorModel, Faults
from .refusals import refuse_bad_call, refuse_bad_key

__all__ = ["RETRY_UNREMOVABLE_AFTER", "Faults", "FileStoreModel"]


class FileStoreModel(EvictorModel):
    """The store's model; mirrors ``HiCacheFile``'s operations, and the evictor's (inherited).

    ``cap``, ``ratio``, ``min_free``, ``commit_moves``, ``own_counted``, ``background``: the evictor's;
    ``disk_size``: the fake disk; ``metadata``, ``ttl``: the beliefs'; ``faults`` find paths in ``directory``;
    ``files``, ``planted`` (S3: name -> (kind: symlink, fifo, dir (EISDIR), other (another user's); bytes)):
    a fake filesystem's view; ``startup_scan``, ``scan_batch``: F8-bg; B1: :mod:`spec.models.refusals`."""

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
        startup_scan: str = "blocking",
        scan_batch: int = 4096,
    ) -> None:
        super().__init__(cap, ratio, min_free, clock, on_evict, commit_moves, own_counted, background)
        self.layout, self.startup_scan, self.scan_batch = layout, startup_scan, scan_batch
        self.listing = file_names.Listing({}, None, 0.0)  # F8, F8-bg: the start-up listing
        self.namespace, self.directory, self.faults, self.reader = namespace, directory, faults, reader
        self.metadata, self.ttl, self.temp_max_age, self.disk_size = metadata, ttl, temp_max_age, disk_size
        self.files, self.planted = {} if files is None else files, {} if planted is None else planted
        self.beliefs: beliefs_model.Births = {}

    def name(self, key: str) -> str:
        """Where ``key``'s file lies, relative to the directory (F1, F1-fanout)."""
        return file_names.file_path(key, self.namespace, self.layout)

    def key_of(self, name: str) -> str | None:
        return file_names.key_of_path(name, self.namespace, self.layout)

    def free(self) -> int:
        used = sum(len(d) for d, _m in self.files.values()) + sum(n for _k, n in self.planted.values())
        return max(self.disk_size - used, 0)

    def believed(self, key: str) -> bool:
        return self.metadata and beliefs_model.contains(self.beliefs, key, self.clock(), self.ttl)

    def size_on_disk(self, key: str) -> int | None:
        return None if (file := self.files.get(self.name(key))) is None else len(file[0])

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
        refuse_bad_key(key, self.namespace)  # B1 (F2), before any I/O
        if self.believed(key):
            return True
        found = self.name(key) in self.files
        (self.teach if found else self.missing)(key)
        return found

    def get(self, key: str, buffer_size: int | None = None) -> bytes | None:
        """``get``, or with ``buffer_size`` the bytes ``get_into`` fills (None: it answers False)."""
        refuse_bad_key(key, self.namespace)  # B1 (F2), before any I/O
        if self._fault("read") is not None:
            return None
        file = self.files.get(self.name(key))
        if file is None:
            self.missing(key)
            return None
        data = file[0]
        if (buffer_size is not None and buffer_size != len(data)) or (
            self._fault("short") is not None and len(data) // 2 != len(data)
        ):
            return None
        self.touch(key, len(data))
        self.teach(key)
        return data

    def set(self, key: str, value: bytes) -> bool:
        refuse_bad_call("set", key, value, namespace=self.namespace)  # B1 (F2), before any I/O
        if self.exists(key):  # believed, or its file is there (F6: refreshed, no write); else gone (F4)
            self.touch(key)
            return True
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
        refuse_bad_key(key, self.namespace)  # B1 (F2), before any I/O
        self.forget(key)
        if gone := self._unlink(self.name(key)):  # else it cannot be unlinked: still there, still tracked
            self.discard(key)
        return gone

    def clear(self) -> bool:
        self.beliefs, found = {}, file_names.pages(self.files, self.namespace, self.layout)
        kept = [(k, n) for _m, name, k, n in found if not self._unlink(name)]
        left = sum(not self._unlink(n) for n in list(self.planted) if self.key_of(n) is not None)
        self.forget_committed()
        for key, size in kept:
            self.touch(key, size)
        return not kept and not left

    def batch_exists(self, keys: Iterable[str]) -> int:
        batch = list(keys) if isinstance(keys, Iterable) else keys  # read once (an iterator too)
        refuse_bad_call("batch_exists", batch, namespace=self.namespace)  # B1 (F5): every key first
        return sum(1 for _key in takewhile(self.exists, batch))

    def restart(self) -> None:
        """F8: a new store on the same directory, its listing begun (``scan_step``: all now; F8-bg: later)."""
        marker = file_names.layout_marker(self.namespace)
        if self.layout == "fanout" and marker not in self.files and self._fault("write") is None:
            self.files[marker] = (b"", self.clock())  # F1-fanout: made once, when missing
        self.seed([])
        blocking = self.startup_scan == "blocking"
        nodes = [*self.files] if blocking else file_names.scan_listing([*self.files, *self.planted])
        self.listing, self.beliefs = file_names.Listing(self.files, nodes, self.clock()), {}
        if blocking:
            self.scan_step(len(nodes) + 1)

    def scan_step(self, size: int = 0) -> bool:
        """F8-bg: ``size`` (or ``scan_batch``) more nodes of the listing: old temps removed, pages adopted and
        believed, the limits enforced.  False once the scan has ended (or when there is none)."""
        if (listed := self.listing.batch(size or self.scan_batch)) is None:
            return False
        for name in file_names.stale_temps(listed, self.listing.now, self.temp_max_age, self.layout):
            self._unlink(name)
        adopted = file_names.scan_adopts(self.lru, listed, self.namespace, self.layout, self.listing.gone)
        self.lru, self.since_pass = adopted + self.lru, self.since_pass + file_names.total(adopted)
        for key, _size, _in_flight in adopted:
            self.teach(key)
        if not self.background:  # V3-bg: the passes bring the limits back
            self.evict()
        return self.listing.left is not None

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
        self.listing.gone.add(name)  # F8-bg (read only while the scan runs)
        return True

    def teach(self, key: str) -> None:
        if self.metadata:
            self.beliefs = beliefs_model.add(self.beliefs, key, self.clock(), self.ttl, None)[0]

    def forget(self, key: str) -> None:
        self.beliefs = beliefs_model.remove(self.beliefs, key)

    def missing(self, key: str) -> None:
        """F4: the file is gone: no belief, and its bytes go back to the accounting (F8-bg: noted gone)."""
        self.forget(key)
        self.discard(key)
        self.listing.gone.add(self.name(key))
