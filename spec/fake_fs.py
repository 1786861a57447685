"""An in-memory filesystem behind the store's port that fails, races and crashes on demand.

What it is for: the file store's tests (unit, lock-step machine, deterministic
races) run on it instead of a disk.  It implements :class:`hicache.fs.FileSystem`
and adds, for the test:

* faults: ``fail(op, errno, times)`` makes the next calls of one operation
  raise ``OSError(errno)`` (ENOSPC on ``write``, EIO on ``read``, ...);
  ``fail_unlink(path, errno)`` makes one file unremovable until
  ``allow_unlink``; ``short_reads(n)`` makes the next reads return half the
  bytes.  A write that fails leaves its partial file behind, as a real one does.
* a disk: ``disk_size`` bounds the bytes of all files; ``free_bytes`` is what
  is left, and a write that does not fit fails with ENOSPC after filling it.
* other processes: ``put``/``remove`` create and delete files without being
  counted, faulted or hooked (the store did not do them).
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

from hicache.fs import DirEntry, FileStat
from spec.fakes import FakeClock

__all__ = ["OPERATIONS", "Crash", "FakeFile", "FakeFileSystem"]

OPERATIONS = ("stat", "read", "write", "replace", "unlink", "mkdir", "scandir", "free")
Hook = Callable[[str, str], None]


class Crash(BaseException):
    """The process died between two filesystem operations (not an OSError: nothing may catch it)."""


class FakeFile:
    """Contents and modification time of one fake file."""

    __slots__ = ("data", "mtime")

    def __init__(self, data: bytes, mtime: float) -> None:
        self.data = data
        self.mtime = mtime

    def __repr__(self) -> str:
        return f"FakeFile({self.data!r}, {self.mtime!r})"


def _error(code: int, path: str) -> OSError:
    # OSError(errno, ...) builds the matching subclass (FileNotFoundError for ENOENT, ...).
    return OSError(code, errno_codes.errorcode.get(code, "error"), path)


class FakeFileSystem:
    """In-memory :class:`hicache.fs.FileSystem` with faults, a bounded disk, hooks and crashes.

    >>> fs = FakeFileSystem(FakeClock(5.0))
    >>> fs.mkdir("/d"); fs.write_new("/d/.t.tmp", memoryview(b"abc")); fs.replace("/d/.t.tmp", "/d/k.bin")
    >>> fs.read_file("/d/k.bin"), fs.calls["write"]
    ((3, b'abc'), 1)
    >>> fs.fail("read", errno_codes.EIO); fs.read_file("/d/k.bin")
    Traceback (most recent call last):
    OSError: [Errno 5] EIO: '/d/k.bin'
    """

    def __init__(self, clock: Callable[[], float] | None = None, *, disk_size: int = 1 << 50) -> None:
        self.clock: Callable[[], float] = clock if clock is not None else FakeClock()
        self.disk_size = disk_size
        self.files: dict[str, FakeFile] = {}
        self.dirs: set[str] = {"/"}
        self.calls: Counter[str] = Counter()
        self.before: Hook | None = None
        self.after: Hook | None = None
        self._faults: dict[str, list[int]] = {}
        self._unremovable: dict[str, int] = {}
        self._short_reads = 0
        self._crash_in: int | None = None
        self.crashed = False
        self._lock = threading.Lock()

    # -- the test's controls -------------------------------------------------

    def fail(self, op: str, code: int, times: int = 1) -> None:
        """The next ``times`` calls of ``op`` raise ``OSError(code)`` (before doing anything)."""
        if op not in OPERATIONS:
            raise ValueError(f"op must be one of {OPERATIONS}, got {op!r}")
        with self._lock:
            self._faults.setdefault(op, []).extend([code] * times)

    def pending_faults(self, op: str) -> int:
        with self._lock:
            return len(self._faults.get(op, ()))

    def fail_unlink(self, path: str, code: int = errno_codes.EPERM) -> None:
        """``unlink(path)`` raises ``OSError(code)`` until :meth:`allow_unlink` (EPERM, EBUSY, EISDIR...)."""
        with self._lock:
            self._unremovable[posixpath.normpath(path)] = code

    def allow_unlink(self, path: str) -> None:
        with self._lock:
            self._unremovable.pop(posixpath.normpath(path), None)

    def short_reads(self, times: int = 1) -> None:
        """The next ``times`` reads return only the first half of the file."""
        with self._lock:
            self._short_reads += times

    def heal(self) -> None:
        """Forget every pending fault and unremovable file."""
        with self._lock:
            self._faults.clear()
            self._unremovable.clear()
            self._short_reads = 0

    def crash_after(self, operations: int) -> None:
        """Let ``operations`` more operations happen; the next one raises :class:`Crash`."""
        with self._lock:
            self._crash_in = operations

    def restart(self) -> None:
        """A new process: no crash pending, the directory as the crash left it."""
        with self._lock:
            self._crash_in = None
            self.crashed = False

    def put(self, path: str, data: bytes, mtime: float | None = None) -> None:
        """Another process writes ``path`` (not counted, never faulted)."""
        path = posixpath.normpath(path)
        with self._lock:
            self.files[path] = FakeFile(bytes(data), self.clock() if mtime is None else mtime)

    def remove(self, path: str) -> bool:
        """Another process deletes ``path``; True when it existed."""
        with self._lock:
            return self.files.pop(posixpath.normpath(path), None) is not None

    def listing(self, path: str) -> dict[str, FakeFile]:
        """The files directly in ``path`` by name (a copy; not counted)."""
        path = posixpath.normpath(path)
        with self._lock:
            return {
                posixpath.basename(p): FakeFile(f.data, f.mtime)
                for p, f in self.files.items()
                if posixpath.dirname(p) == path
            }

    def used_bytes(self) -> int:
        with self._lock:
            return sum(len(f.data) for f in self.files.values())

    # -- the port ------------------------------------------------------------

    def stat(self, path: str) -> FileStat:
        path = self._enter("stat", path)
        try:
            with self._lock:
                self._step("stat", path)
                file = self._existing(path)
                result = FileStat(len(file.data), file.mtime)
        finally:
            self._leave("stat", path)
        return result

    def read_file(self, path: str) -> tuple[int, bytes]:
        path = self._enter("read", path)
        try:
            with self._lock:
                self._step("read", path)
                data = self._existing(path).data
                result = (len(data), self._maybe_short(data))
        finally:
            self._leave("read", path)
        return result

    def read_into(self, path: str, buffer: memoryview) -> tuple[int, int]:
        path = self._enter("read", path)
        try:
            with self._lock:
                self._step("read", path)
                data = self._existing(path).data
                if len(data) != len(buffer):
                    result = (len(data), 0)
                else:
                    got = self._maybe_short(data)
                    buffer[: len(got)] = got
                    result = (len(data), len(got))
        finally:
            self._leave("read", path)
        return result

    def write_new(self, path: str, data: memoryview) -> None:
        if not data.c_contiguous:  # as os.write: a caller bug, not an I/O failure
            raise BufferError("memoryview: underlying buffer is not C-contiguous")
        path = self._enter("write", path)
        try:
            with self._lock:
                payload = bytes(data)
                if self._crash_in == 0 and not self.crashed:
                    self._create(path, payload[: len(payload) // 2])  # died mid-write
                self._step("write", path, create_partial=payload)
                self._create(path, b"")
                free = max(self.disk_size - sum(len(f.data) for f in self.files.values()), 0)
                if len(payload) > free:  # an empty file always fits: it takes no blocks
                    self.files[path].data = payload[:free]
                    raise _error(errno_codes.ENOSPC, path)
                self.files[path].data = payload
        finally:
            self._leave("write", path)

    def replace(self, src: str, dst: str) -> None:
        src = self._enter("replace", src)
        dst = posixpath.normpath(dst)
        try:
            with self._lock:
                self._step("replace", src)
                file = self._existing(src)
                self._parent(dst)
                del self.files[src]
                self.files[dst] = file
        finally:
            self._leave("replace", src)

    def unlink(self, path: str) -> None:
        path = self._enter("unlink", path)
        try:
            with self._lock:
                self._step("unlink", path)
                if path in self._unremovable:
                    raise _error(self._unremovable[path], path)
                if path in self.dirs:
                    raise _error(errno_codes.EISDIR, path)
                self._existing(path)
                del self.files[path]
        finally:
            self._leave("unlink", path)

    def mkdir(self, path: str) -> None:
        path = self._enter("mkdir", path)
        try:
            with self._lock:
                self._step("mkdir", path)
                missing = path
                while missing not in self.dirs:
                    if missing in self.files:
                        raise _error(errno_codes.ENOTDIR, missing)
                    self.dirs.add(missing)
                    missing = posixpath.dirname(missing)
        finally:
            self._leave("mkdir", path)

    def scandir(self, path: str) -> Iterator[DirEntry]:
        path = self._enter("scandir", path)
        try:
            with self._lock:
                self._step("scandir", path)
                if path not in self.dirs:
                    raise _error(errno_codes.ENOENT, path)
                entries = [
                    DirEntry(posixpath.basename(p), len(f.data), f.mtime)
                    for p, f in sorted(self.files.items())
                    if posixpath.dirname(p) == path
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

    # -- internals -----------------------------------------------------------

    def _enter(self, op: str, path: str) -> str:
        if self.before is not None:
            self.before(op, path)
        return posixpath.normpath(path)

    def _leave(self, op: str, path: str) -> None:
        if self.after is not None and not self.crashed:
            self.after(op, path)

    def _step(self, op: str, path: str, create_partial: bytes | None = None) -> None:
        """Count the call, then crash or fail it if the test asked for that (lock held)."""
        if self.crashed:
            raise Crash(f"{op} {path} after the crash")
        if self._crash_in is not None:
            if self._crash_in == 0:
                self.crashed = True
                raise Crash(f"crashed at {op} {path}")
            self._crash_in -= 1
        self.calls[op] += 1
        queue = self._faults.get(op)
        if queue:
            code = queue.pop(0)
            if create_partial is not None:
                self._create(path, create_partial[: len(create_partial) // 2])
            raise _error(code, path)

    def _maybe_short(self, data: bytes) -> bytes:
        if self._short_reads:
            self._short_reads -= 1
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

    def _create(self, path: str, data: bytes) -> None:
        if path in self.files or path in self.dirs:
            raise _error(errno_codes.EEXIST, path)
        self._parent(path)
        self.files[path] = FakeFile(data, self.clock())
