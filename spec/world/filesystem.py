"""An in-memory filesystem behind the store's port that fails, races and crashes on demand.

What it is for: the file store's tests (unit, lock-step machine, deterministic
races) run on it instead of a disk.  It implements :class:`hicache.fs.FileSystem`
and adds, for the test:

* faults: ``fail(op, errno, times)`` makes the next calls of one operation
  raise ``OSError(errno)`` (ENOSPC on ``write``, EIO on ``read``, ...);
  ``fail_unlink(path, errno)`` makes one file unremovable until
  ``allow_unlink``; ``short_reads(n)`` makes the next reads return half the
  bytes.  A write that fails leaves its partial file behind, as a real one does.
  They are kept in ``faults``, a :class:`FaultLedger` the file store's model reads
  too (as another reader), so that a test arms a fault once for both.
* a disk: ``disk_size`` bounds the bytes of all files; ``free_bytes`` is what
  is left, and a write that does not fit fails with ENOSPC after filling it.
* other processes: ``put``/``remove`` create and delete files without being
  counted, faulted or hooked (the store did not do them).
* other users and other kinds of node: the fake's process runs as ``uid``/
  ``gid`` (default 1000/1000); ``put(..., uid=...)`` writes a file another
  user owns, ``plant(path, kind)`` makes a symlink, FIFO, socket, device or
  directory where a file could be, and ``make_dir(path, uid, gid, mode)`` a
  directory of any owner and mode (for the storage directory itself, S1).
  Planted directories have no children; a symlink's ``target`` is followed
  only by ``resolve`` (and only to a directory): every other operation acts
  on the node itself, as ``O_NOFOLLOW``/``lstat``/``unlink`` do.
* counting: ``calls[op]`` counts every operation the store made.
* hooks: ``before(op, path)`` / ``after(op, path)`` run outside the fake's lock
  around every operation, so a test can pause a thread between two of them.
* crashes: ``crash_after(n)`` lets ``n`` more operations happen, then the next
  one raises :class:`Crash` instead (a crashing ``write`` leaves half the bytes
  in its file); every later operation raises too until ``restart()``.  What
  was renamed survives; what was only in a temp file stays as a leftover.

Operation names: ``stat read write replace unlink mkdir scandir free``.
Time: modification times and ``now()`` come from ``clock`` (a FakeClock).
Thread model: one lock around the state; safe from several threads.
Standard library only.
"""

from __future__ import annotations

import errno as errno_codes
import posixpath
import threading
from collections import Counter
from collections.abc import Callable, Iterator

from hicache.fs import Accept, DirEntry, FileStat, NotAPageError, check_opened

from .clock import FakeClock

__all__ = ["KINDS", "OPERATIONS", "Crash", "FakeFile", "FakeFileSystem", "FaultLedger"]

OPERATIONS = ("stat", "read", "write", "replace", "unlink", "mkdir", "scandir", "free")
Hook = Callable[[str, str], None]


class Crash(BaseException):
    """The process died between two filesystem operations (not an OSError: nothing may catch it)."""


KINDS = ("file", "symlink", "fifo", "socket", "device", "dir")


class FakeFile:
    """Contents, modification time, kind, owner, group and mode of one fake node (not a real directory)."""

    __slots__ = ("data", "gid", "kind", "mode", "mtime", "target", "uid")

    def __init__(
        self,
        data: bytes,
        mtime: float,
        kind: str = "file",
        uid: int = 1000,
        gid: int = 1000,
        mode: int = 0o600,
        target: str = "",
    ) -> None:
        self.data = data
        self.mtime = mtime
        self.kind = kind
        self.uid = uid
        self.gid = gid
        self.mode = mode
        self.target = target  # a symlink's target

    def stat(self) -> FileStat:
        size = len(self.target) if self.kind == "symlink" else len(self.data)
        return FileStat(size, self.mtime, self.kind, self.uid, self.gid, self.mode)

    def __repr__(self) -> str:
        if self.kind == "file" and self.uid == 1000:
            return f"FakeFile({self.data!r}, {self.mtime!r})"
        return f"FakeFile({self.data!r}, {self.mtime!r}, {self.kind!r}, uid={self.uid})"


class FaultLedger:
    """The faults armed in a world, each read once by every reader (B2, V5): the fake filesystem reads
    as ``"fs"``, the file store's model as ``"model"``, so one ``arm`` serves both.

    ``arm(op, code)``: the next call of ``op`` (an operation name, or ``"short"``: the next read returns
    half the bytes, code 0) fails with ``code``; ``unremovable``: path -> the errno its unlink fails with.
    Not locked: the fake filesystem reads it under its own lock.
    """

    def __init__(self) -> None:
        self.armed: dict[str, list[int]] = {}
        self.taken: Counter[tuple[str, str]] = Counter()
        self.unremovable: dict[str, int] = {}

    def arm(self, op: str, code: int, times: int = 1) -> None:
        self.armed.setdefault(op, []).extend([code] * times)

    def pending(self, op: str, reader: str = "fs") -> int:
        return len(self.armed.get(op, ())) - self.taken[reader, op]

    def take(self, op: str, reader: str = "fs") -> int | None:
        """The errno the next call of ``op`` fails with, for ``reader`` (None: it succeeds)."""
        if not self.pending(op, reader):
            return None
        self.taken[reader, op] += 1
        return self.armed[op][self.taken[reader, op] - 1]

    def stuck(self, path: str) -> bool:
        return path in self.unremovable

    def heal(self) -> None:
        """Every armed fault and unremovable path forgotten."""
        self.armed.clear()
        self.taken.clear()
        self.unremovable.clear()


def _error(code: int, path: str) -> OSError:
    # OSError(errno, ...) builds the matching subclass (FileNotFoundError for ENOENT, ...).
    return OSError(code, errno_codes.errorcode.get(code, "error"), path)


class FakeFileSystem:
    """In-memory :class:`hicache.fs.FileSystem` with faults, a bounded disk, hooks and crashes.

    >>> fs = FakeFileSystem(FakeClock(5.0))
    >>> _ = fs.mkdir("/d"); fs.write_new("/d/.t.tmp", memoryview(b"abc")); fs.replace("/d/.t.tmp", "/d/k.bin")
    >>> fs.read_file("/d/k.bin"), fs.calls["write"]
    ((3, b'abc'), 1)
    >>> fs.fail("read", errno_codes.EIO); fs.read_file("/d/k.bin")
    Traceback (most recent call last):
    OSError: [Errno 5] EIO: '/d/k.bin'
    """

    def __init__(
        self,
        clock: Callable[[], float] | None = None,
        *,
        disk_size: int = 1 << 50,
        uid: int = 1000,
        gid: int = 1000,
        umask: int = 0o022,
    ) -> None:
        self.clock: Callable[[], float] = clock if clock is not None else FakeClock()
        self.disk_size = disk_size
        self.uid, self.gid, self.umask = uid, gid, umask
        self.files: dict[str, FakeFile] = {}
        self.dirs: set[str] = {"/"}
        # Owner, group and mode of each directory; "/" is root's, as are the parents mkdir makes
        # (so that a test's directory is what the test made it).
        self.dir_meta: dict[str, tuple[int, int, int]] = {"/": (0, 0, 0o755)}
        self.calls: Counter[str] = Counter()
        self.before: Hook | None = None
        self.after: Hook | None = None
        self.faults = FaultLedger()
        self._crash_in: int | None = None
        self.crashed = False
        self.locks: dict[int, str] = {}  # C6: handle -> lock file path, while held
        self._handles = 0
        self._lock = threading.Lock()

    # -- the test's controls -------------------------------------------------

    def fail(self, op: str, code: int, times: int = 1) -> None:
        """The next ``times`` calls of ``op`` raise ``OSError(code)`` (before doing anything)."""
        if op not in OPERATIONS:
            raise ValueError(f"op must be one of {OPERATIONS}, got {op!r}")
        with self._lock:
            self.faults.arm(op, code, times)

    def pending_faults(self, op: str) -> int:
        with self._lock:
            return self.faults.pending(op)

    def fail_unlink(self, path: str, code: int = errno_codes.EPERM) -> None:
        """``unlink(path)`` raises ``OSError(code)`` until :meth:`allow_unlink` (EPERM, EBUSY, EISDIR...)."""
        with self._lock:
            self.faults.unremovable[posixpath.normpath(path)] = code

    def allow_unlink(self, path: str) -> None:
        with self._lock:
            self.faults.unremovable.pop(posixpath.normpath(path), None)

    def short_reads(self, times: int = 1) -> None:
        """The next ``times`` reads return only the first half of the file."""
        with self._lock:
            self.faults.arm("short", 0, times)

    def heal(self) -> None:
        """Forget every pending fault and unremovable file."""
        with self._lock:
            self.faults.heal()

    def crash_after(self, operations: int) -> None:
        """Let ``operations`` more operations happen; the next one raises :class:`Crash`."""
        with self._lock:
            self._crash_in = operations

    def restart(self) -> None:
        """A new process: no crash pending, the directory as the crash left it."""
        with self._lock:
            self._crash_in = None
            self.crashed = False

    def put(self, path: str, data: bytes, mtime: float | None = None, uid: int | None = None) -> None:
        """Another process (of user ``uid``, default this one's) writes ``path`` (not counted or faulted)."""
        path = posixpath.normpath(path)
        with self._lock:
            owner = self.uid if uid is None else uid
            self.files[path] = FakeFile(
                bytes(data), self.clock() if mtime is None else mtime, uid=owner, gid=owner, mode=0o644
            )

    def plant(self, path: str, kind: str, *, target: str = "/etc/shadow", uid: int | None = None) -> None:
        """Someone makes a node of ``kind`` (symlink, fifo, socket, device, dir) at ``path``, replacing
        whatever was there (not counted, never faulted).  A planted ``dir`` has no children."""
        if kind not in KINDS or kind == "file":
            raise ValueError(f"kind must be one of {KINDS[1:]}, got {kind!r}")
        path = posixpath.normpath(path)
        with self._lock:
            owner = self.uid if uid is None else uid
            self.files[path] = FakeFile(
                b"", self.clock(), kind, owner, owner, 0o777 if kind == "symlink" else 0o644, target
            )

    def make_dir(self, path: str, uid: int | None = None, gid: int | None = None, mode: int = 0o700) -> None:
        """Someone (user ``uid``, default this one) makes directory ``path`` with ``mode`` (parents too)."""
        path = posixpath.normpath(path)
        with self._lock:
            missing = path
            while missing not in self.dirs:
                self.dirs.add(missing)
                self.dir_meta[missing] = (0, 0, 0o755)
                missing = posixpath.dirname(missing)
            owner = self.uid if uid is None else uid
            self.dir_meta[path] = (owner, owner if gid is None else gid, mode)

    def chmod_dir(self, path: str, mode: int) -> None:
        path = posixpath.normpath(path)
        with self._lock:
            uid, gid, _mode = self.dir_meta[path]
            self.dir_meta[path] = (uid, gid, mode)

    def remove(self, path: str) -> bool:
        """Another process deletes ``path``; True when it existed."""
        with self._lock:
            return self.files.pop(posixpath.normpath(path), None) is not None

    def listing(self, path: str, *, tree: bool = False) -> dict[str, FakeFile]:
        """The files directly in ``path`` by name (a copy; not counted); with ``tree``, every file under it
        by its path relative to ``path`` (F1-fanout's subdirectories)."""
        with self._lock:
            return {
                relative: FakeFile(f.data, f.mtime)
                for relative, f in self._under(path, tree)
                if f.kind == "file" and f.uid == self.uid
            }

    def others(self, path: str, *, tree: bool = False) -> dict[str, tuple[str, int]]:
        """The nodes that :meth:`listing` leaves out: name (or relative path) -> (kind, uid)."""
        with self._lock:
            return {
                relative: (f.kind, f.uid)
                for relative, f in self._under(path, tree)
                if not (f.kind == "file" and f.uid == self.uid)
            }

    def _under(self, path: str, tree: bool) -> list[tuple[str, FakeFile]]:
        """The nodes directly in ``path`` (or, with ``tree``, anywhere under it), by relative path."""
        path = posixpath.normpath(path)
        prefix = path.rstrip("/") + "/"
        return [
            (p[len(prefix) :], f)
            for p, f in self.files.items()
            if (p.startswith(prefix) if tree else posixpath.dirname(p) == path)
        ]

    def used_bytes(self) -> int:
        with self._lock:
            return sum(len(f.data) for f in self.files.values())

    def _dir_stat(self, path: str) -> FileStat:
        """The stat of the directory ``path`` (its owner and mode as made, else root's 0755)."""
        uid, gid, mode = self.dir_meta.get(path, (0, 0, 0o755))
        return FileStat(0, 0.0, "dir", uid, gid, mode)

    # -- the port ------------------------------------------------------------

    def stat(self, path: str) -> FileStat:
        path = self._enter("stat", path)
        try:
            with self._lock:
                self._step("stat", path)
                result = self._dir_stat(path) if path in self.dirs else self._existing(path).stat()
        finally:
            self._leave("stat", path)
        return result

    def read_file(
        self, path: str, limit: int | None = None, accept: Accept | None = None
    ) -> tuple[int, bytes]:
        path = self._enter("read", path)
        try:
            with self._lock:
                self._step("read", path)
                data = self._opened(path, limit, accept).data
                result = (len(data), self._maybe_short(data))
        finally:
            self._leave("read", path)
        return result

    def read_into(
        self, path: str, buffer: memoryview, limit: int | None = None, accept: Accept | None = None
    ) -> tuple[int, int]:
        path = self._enter("read", path)
        try:
            with self._lock:
                self._step("read", path)
                data = self._opened(path, limit, accept).data
                if len(data) != len(buffer):
                    result = (len(data), 0)
                else:
                    got = self._maybe_short(data)
                    buffer[: len(got)] = got
                    result = (len(data), len(got))
        finally:
            self._leave("read", path)
        return result

    def write_new(self, path: str, data: memoryview, mode: int = 0o600) -> None:
        if not data.c_contiguous:  # as os.write: a caller bug, not an I/O failure
            raise BufferError("memoryview: underlying buffer is not C-contiguous")
        path = self._enter("write", path)
        try:
            with self._lock:
                payload = bytes(data)
                if self._crash_in == 0 and not self.crashed:
                    self._create(path, payload[: len(payload) // 2], mode)  # died mid-write
                self._step("write", path, create_partial=(payload, mode))
                self._create(path, b"", mode)
                free = max(self.disk_size - sum(len(f.data) for f in self.files.values()), 0)
                if len(payload) > free:  # an empty file always fits: it takes no blocks
                    self.files[path].data = payload[:free]
                    raise _error(errno_codes.ENOSPC, path)
                self.files[path].data = payload
        finally:
            self._leave("write", path)

    # -- descriptors (the oracle's FakeOS: os.open, os.read, os.write, os.fstat on this filesystem) --------

    def open_node(self, path: str) -> tuple[FileStat, bytes, FakeFile | None]:
        """``open(O_RDONLY | O_NOFOLLOW | O_NONBLOCK)``: one ``read`` operation (counted, faulted, hooked).

        Answers the opened node's stat, the bytes it held at the open (what later reads of the descriptor
        see, whatever happens to the path) and the node itself (None for a directory).  A symlink raises
        ``ELOOP`` (``O_NOFOLLOW``), a socket ``ENXIO``, a missing path ``ENOENT``; a FIFO, a device or a
        directory opens (the reader checks what it opened).  Short-read faults are taken by
        :meth:`take_short` at the first read of the descriptor, not here.
        """
        path = self._enter("read", path)
        try:
            with self._lock:
                self._step("read", path)
                if path in self.dirs:
                    return self._dir_stat(path), b"", None
                node = self._existing(path)
                if node.kind == "symlink":
                    raise _error(errno_codes.ELOOP, path)
                if node.kind == "socket":
                    raise _error(errno_codes.ENXIO, path)
                return node.stat(), node.data, node
        finally:
            self._leave("read", path)

    def take_short(self, data: bytes) -> bytes:
        """``data`` cut to half when a short-read fault is armed (taken once; not an operation)."""
        with self._lock:
            return self._maybe_short(data)

    def append(self, path: str, node: FakeFile, data: memoryview) -> int:
        """``os.write`` on a descriptor of ``node`` (created by :meth:`write_new`): one ``write`` operation.

        Faults and crashes as :meth:`write_new` (a crash or a fault leaves half the bytes appended); a
        write that does not fit the disk appends what fits, then raises ENOSPC.  Answers the bytes written.
        """
        if not data.c_contiguous:
            raise BufferError("memoryview: underlying buffer is not C-contiguous")
        path = self._enter("write", path)
        try:
            with self._lock:
                payload = bytes(data)
                if self._crash_in == 0 and not self.crashed:
                    node.data += payload[: len(payload) // 2]  # died mid-write
                try:
                    self._step("write", path)
                except OSError:
                    node.data += payload[: len(payload) // 2]
                    raise
                free = max(self.disk_size - sum(len(f.data) for f in self.files.values()), 0)
                if len(payload) > free:
                    node.data += payload[:free]
                    raise _error(errno_codes.ENOSPC, path)
                node.data += payload
                node.mtime = self.clock()
        finally:
            self._leave("write", path)
        return len(payload)

    def descriptor_call(self, op: str, path: str) -> None:
        """A call on an open descriptor (fstat, close, fchmod...): the hooks run and a crashed process
        stays dead (:class:`Crash`), but it is no operation of :data:`OPERATIONS` (not counted, never
        faulted: the port's operation is the open, the read or the write around it)."""
        path = self._enter(op, path)
        try:
            # No lock taken (one attribute read): a store's finalizer may close a descriptor while this
            # thread is inside another operation of the fake, holding its (non-reentrant) lock.
            if self.crashed:
                raise Crash(f"{op} {path} after the crash")
        finally:
            self._leave(op, path)

    def replace(self, src: str, dst: str) -> None:
        src = self._enter("replace", src)
        dst = posixpath.normpath(dst)
        try:
            with self._lock:
                self._step("replace", src)
                file = self._existing(src)
                self._parent(dst)
                if dst in self.dirs or (dst in self.files and self.files[dst].kind == "dir"):
                    raise _error(errno_codes.EISDIR, dst)
                del self.files[src]
                self.files[dst] = file
        finally:
            self._leave("replace", src)

    def unlink(self, path: str) -> None:
        path = self._enter("unlink", path)
        try:
            with self._lock:
                self._step("unlink", path)
                if self.faults.stuck(path):
                    raise _error(self.faults.unremovable[path], path)
                if path in self.dirs or self._existing(path).kind == "dir":
                    raise _error(errno_codes.EISDIR, path)
                del self.files[path]
        finally:
            self._leave("unlink", path)

    def mkdir(self, path: str, mode: int = 0o700, gid: int | None = None) -> FileStat:
        path = self._enter("mkdir", path)
        try:
            with self._lock:
                self._step("mkdir", path)
                missing = path
                while missing not in self.dirs:
                    if missing in self.files:
                        if missing == path:
                            break  # a node is there already: reported below, for the caller to check
                        raise _error(errno_codes.ENOTDIR, missing)
                    self.dirs.add(missing)
                    self.dir_meta[missing] = (self.uid, self.gid, 0o777 & ~self.umask)
                    missing = posixpath.dirname(missing)
                if missing != path:  # this call made it
                    self.dir_meta[path] = (self.uid, self.gid if gid is None else gid, mode)
                if path in self.dirs:
                    uid, gid_, mode_ = self.dir_meta.get(path, (0, 0, 0o755))
                    result = FileStat(0, 0.0, "dir", uid, gid_, mode_)
                else:
                    result = self.files[path].stat()
        finally:
            self._leave("mkdir", path)
        return result

    def scandir(self, path: str) -> Iterator[DirEntry]:
        path = self._enter("scandir", path)
        try:
            with self._lock:
                self._step("scandir", path)
                if path not in self.dirs:
                    raise _error(errno_codes.ENOENT, path)
                entries = [
                    DirEntry(posixpath.basename(p), f.stat().size, f.mtime, f.kind, f.uid, f.gid, f.mode)
                    for p, f in sorted(self.files.items())
                    if posixpath.dirname(p) == path
                ]
                entries += [
                    DirEntry(posixpath.basename(d), 0, 0.0, "dir", *self.dir_meta.get(d, (0, 0, 0o755)))
                    for d in sorted(self.dirs)
                    if d != path and posixpath.dirname(d) == path
                ]
        finally:
            self._leave("scandir", path)
        return iter(entries)

    def free_bytes(self, path: str) -> int:
        path = self._enter("free", path)
        try:
            with self._lock:
                self._step("free", path)
                free = self.disk_size - sum(len(f.data) for f in self.files.values())
        finally:
            self._leave("free", path)
        return max(free, 0)

    def now(self) -> float:
        return self.clock()

    def resolve(self, path: str) -> str:
        """Follow symlinks to directories (not counted: a pure path computation, as ``realpath``)."""
        path = posixpath.normpath(path)
        with self._lock:
            for _hop in range(40):
                node = self.files.get(path)
                if node is None or node.kind != "symlink":
                    return path
                path = posixpath.normpath(posixpath.join(posixpath.dirname(path), node.target))
            raise _error(errno_codes.ELOOP, path)

    def euid(self) -> int:
        return self.uid

    def try_lock(self, path: str, mode: int = 0o600) -> int | None:
        """C6: an advisory lock per path (not counted, never faulted; the lock file is not modelled as a
        file, so listings stay those of pages and temp files)."""
        path = posixpath.normpath(path)
        with self._lock:
            if path in self.locks.values():
                return None
            self._handles += 1
            self.locks[self._handles] = path
            return self._handles

    def unlock(self, handle: int) -> None:
        # No lock taken: this runs from a store's finalizer, which the garbage collector may call while
        # this thread is inside another operation of the fake, holding its (non-reentrant) lock.
        # One dict.pop is atomic under the GIL.
        self.locks.pop(handle, None)

    def capacity_bytes(self, path: str) -> int:
        """``disk_size`` (not counted, never faulted: a property of the disk, as ``statvfs``'s f_blocks)."""
        return self.disk_size

    # -- internals -----------------------------------------------------------

    def _enter(self, op: str, path: str) -> str:
        if self.before is not None:
            self.before(op, path)
        return posixpath.normpath(path)

    def _leave(self, op: str, path: str) -> None:
        if self.after is not None and not self.crashed:
            self.after(op, path)

    def _step(self, op: str, path: str, create_partial: tuple[bytes, int] | None = None) -> None:
        """Count the call, then crash or fail it if the test asked for that (lock held)."""
        if self.crashed:
            raise Crash(f"{op} {path} after the crash")
        if self._crash_in is not None:
            if self._crash_in == 0:
                self.crashed = True
                raise Crash(f"crashed at {op} {path}")
            self._crash_in -= 1
        self.calls[op] += 1
        code = self.faults.take(op)
        if code is not None:
            if create_partial is not None:  # made with its mode before the write failed, as os.open does
                payload, mode = create_partial
                self._create(path, payload[: len(payload) // 2], mode)
            raise _error(code, path)

    def _opened(self, path: str, limit: int | None, accept: Accept | None) -> FakeFile:
        """``open(O_NOFOLLOW | O_NONBLOCK)`` then ``fstat`` (lock held): S3, S4 as the OS port does."""
        if path in self.dirs:
            check_opened(path, self._dir_stat(path), limit, accept)
        file = self._existing(path)
        if file.kind == "symlink":  # O_NOFOLLOW: ELOOP, reported as the OS port does
            raise NotAPageError(path, file.stat())
        check_opened(path, file.stat(), limit, accept)
        return file

    def _maybe_short(self, data: bytes) -> bytes:
        if self.faults.take("short") is not None:
            return data[: len(data) // 2]
        return data

    def _existing(self, path: str) -> FakeFile:
        file = self.files.get(path)
        if file is None:
            raise _error(errno_codes.EISDIR if path in self.dirs else errno_codes.ENOENT, path)
        return file

    def _parent(self, path: str) -> None:
        if posixpath.dirname(path) not in self.dirs:
            raise _error(errno_codes.ENOENT, path)

    def _create(self, path: str, data: bytes, mode: int) -> None:
        if path in self.files or path in self.dirs:
            raise _error(errno_codes.EEXIST, path)
        self._parent(path)
        self.files[path] = FakeFile(data, self.clock(), uid=self.uid, gid=self.gid, mode=mode)
