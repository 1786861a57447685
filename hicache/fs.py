"""The filesystem port of the file store: the few operations it needs, and the OS implementation.

:class:`hicache.HiCacheFile` and :class:`hicache.LRUFileEvictor` touch the disk only through a
:class:`FileSystem` (its methods say what each call does and raises), so tests can put an in-memory fake
behind them that fails on demand (ENOSPC, EIO, EPERM, short reads) and crashes between any two
operations (``spec/world/filesystem.py``).  Every operation is one call, so counting calls counts
filesystem round
trips (what docs/SEMANTICS.md F6 and F5 promise to keep low).  Checks of opened files: S3, S4; modes and
groups: S1, S2; the lock: C6; the capacity: S8.

Complexity: one system call (or a few for read/write) per operation, except ``scandir``, which is
O(files).  Thread model: stateless; safe from any thread.
"""

from __future__ import annotations

import errno
import fcntl
import operator
import os
import stat as stat_module
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple, Protocol

__all__ = [
    "DirEntry",
    "FileStat",
    "FileSystem",
    "FileTooLargeError",
    "NotAPageError",
    "OSFileSystem",
    "kind_of",
]


class FileStat(NamedTuple):
    """Size in bytes, modification time (wall-clock seconds), kind, owner, group and mode of one node."""

    size: int
    mtime: float
    kind: str = "file"
    uid: int = 0
    gid: int = 0
    mode: int = 0o600  # the permission bits (and set-id/sticky bits), without the type


class DirEntry(NamedTuple):
    """One node found by :meth:`FileSystem.scandir` (any kind; a symlink is not followed)."""

    name: str
    size: int
    mtime: float
    kind: str = "file"
    uid: int = 0
    gid: int = 0
    mode: int = 0o600  # the permission bits (and set-id/sticky bits), without the type


class NotAPageError(OSError):
    """The opened node is not a regular file, or not one the reader accepts (S3): nothing was read."""

    def __init__(self, path: str, st: FileStat) -> None:
        super().__init__(errno.EPERM, f"not a page (a {st.kind} of uid {st.uid})", path)
        self.stat = st


class FileTooLargeError(OSError):
    """The opened file is larger than the reader's limit (S4): nothing was read or allocated."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes, more than the limit of {limit}", path)
        self.size = size


_KINDS = {
    stat_module.S_IFREG: "file",
    stat_module.S_IFDIR: "dir",
    stat_module.S_IFLNK: "symlink",
    stat_module.S_IFIFO: "fifo",
    stat_module.S_IFSOCK: "socket",
}
_FORMAT_BITS = 0o170000  # stat.S_IFMT's mask: the type bits of st_mode
_PERMISSION_BITS = 0o7777  # stat.S_IMODE's mask


def kind_of(mode: int) -> str:
    """Return the kind of a node from its ``st_mode``: ``file dir symlink fifo socket device``."""
    return _KINDS.get(mode & _FORMAT_BITS, "device")


Accept = Callable[[FileStat], bool]


def check_opened(path: str, st: FileStat, limit: int | None, accept: Accept | None) -> None:
    """S3, S4: raise unless ``st`` (of an opened descriptor) is an accepted regular file within ``limit``."""
    if st.kind != "file" or (accept is not None and not accept(st)):
        raise NotAPageError(path, st)
    if limit is not None and st.size > limit:
        raise FileTooLargeError(path, st.size, limit)


class FileSystem(Protocol):
    """The operations the file store performs on its directory, one call each.

    Every failure is an ``OSError`` subclass carrying an ``errno`` (``FileNotFoundError`` for a missing
    file); nothing else is raised for an I/O problem.  Paths are ``str``.  Kinds (``FileStat.kind``,
    ``DirEntry.kind``): ``file dir symlink fifo socket device``.
    """

    def stat(self, path: str) -> FileStat:
        """Return the size, mtime (wall clock), kind, owner, group and mode of the node, not its target."""
        ...

    def read_file(
        self, path: str, limit: int | None = None, accept: Accept | None = None
    ) -> tuple[int, bytes]:
        """Return ``(size, data)``: the size the open file had and the bytes read (S3, S4).

        ``len(data) < size`` is a short read.  The file is opened without following a symlink and without
        blocking (a FIFO never blocks), and the opened descriptor's stat is checked before anything is
        read: a node that is not a regular file, or that ``accept(stat)`` refuses, raises
        :class:`NotAPageError`; a file larger than ``limit`` raises :class:`FileTooLargeError`.  At most
        the opened file's size is read.
        """
        ...

    def read_into(
        self, path: str, buffer: memoryview, limit: int | None = None, accept: Accept | None = None
    ) -> tuple[int, int]:
        """Return ``(size, read)``: the size of the open file and how many bytes went into ``buffer``.

        Nothing is read (``read == 0``) unless ``size == len(buffer)``, so a file of another layout is
        never copied in.  Opened and checked as :meth:`read_file`.
        """
        ...

    def write_new(self, path: str, data: memoryview, mode: int = 0o600) -> None:
        """Create ``path`` holding ``data``, with exactly the permission bits ``mode`` whatever the umask.

        ``path`` must not exist (``O_EXCL``), and a symlink there is not followed (``O_NOFOLLOW``).
        ``data`` is a C-contiguous buffer (``os.write`` takes no other; anything else is a caller bug:
        ``BufferError``).  On failure a partial file may remain: the caller removes it (S2).
        """
        ...

    def replace(self, src: str, dst: str) -> None:
        """Rename ``src`` over ``dst`` atomically."""
        ...

    def unlink(self, path: str) -> None:
        """Remove ``path`` (a symlink itself, never its target)."""
        ...

    def mkdir(self, path: str, mode: int = 0o700, gid: int | None = None) -> FileStat:
        """Make the directory ``path`` and its parents (an existing one is fine); answer the stat at ``path``.

        The directory it creates gets exactly ``mode`` whatever the umask, and the group ``gid`` when given
        (S1).  The stat is of the node at ``path`` afterwards (not following a symlink), made by this call
        or not, for the caller to check.
        """
        ...

    def scandir(self, path: str) -> Iterator[DirEntry]:
        """Yield a ``DirEntry`` of every node in the directory, in one pass, not following symlinks.

        A node that vanishes during the pass is left out.  O(files).
        """
        ...

    def resolve(self, path: str) -> str:
        """Return ``path`` with every symlink resolved (S1)."""
        ...

    def euid(self) -> int:
        """Return the effective user id of the process (S1, S3)."""
        ...

    def free_bytes(self, path: str) -> int:
        """Return the bytes available to unprivileged writers on the filesystem of ``path``."""
        ...

    def capacity_bytes(self, path: str) -> int:
        """Return the size of the filesystem that holds ``path`` (S8)."""
        ...

    def try_lock(self, path: str, mode: int = 0o600) -> int | None:
        """Take an exclusive advisory lock on the lock file ``path`` without waiting (C6).

        The file is opened (created with ``mode``, not following a symlink); the answer is a handle while
        held, ``None`` when another open file holds it (another live store).
        """
        ...

    def unlock(self, handle: int) -> None:
        """Release a lock that :meth:`try_lock` took."""
        ...

    def now(self) -> float:
        """Return the wall-clock time that modification times are measured in."""
        ...


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC


def _open_for_read(path: str) -> int:
    """``open(O_NOFOLLOW | O_NONBLOCK)``; a symlink at ``path`` (``ELOOP``) is a :class:`NotAPageError`."""
    try:
        return os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        try:
            st = _file_stat(os.lstat(path))
        except OSError:
            raise exc from None
        raise NotAPageError(path, st) from exc


def _file_stat(st: os.stat_result) -> FileStat:
    mode = st.st_mode  # on every page read: kind_of and S_IMODE inlined
    kind = _KINDS.get(mode & _FORMAT_BITS, "device")
    return FileStat(st.st_size, st.st_mtime, kind, st.st_uid, st.st_gid, mode & _PERMISSION_BITS)


class OSFileSystem:
    """The real filesystem, through ``os``.

    >>> import tempfile, os.path
    >>> fs = OSFileSystem()
    >>> with tempfile.TemporaryDirectory() as d:
    ...     fs.write_new(os.path.join(d, "a.bin"), memoryview(b"xyz"))
    ...     fs.read_file(os.path.join(d, "a.bin"))
    (3, b'xyz')
    """

    __slots__ = ()

    def stat(self, path: str) -> FileStat:
        """Return the node's stat through ``os.lstat`` (no symlink followed)."""
        return _file_stat(os.lstat(path))

    def read_file(
        self, path: str, limit: int | None = None, accept: Accept | None = None
    ) -> tuple[int, bytes]:
        """Read a whole regular file through a descriptor opened with ``O_NOFOLLOW | O_NONBLOCK`` (S3, S4)."""
        fd = _open_for_read(path)
        try:
            st = _file_stat(os.fstat(fd))
            check_opened(path, st, limit, accept)
            size = st.size
            chunks = []
            got = 0
            while got < size:
                chunk = os.read(fd, size - got)
                if not chunk:
                    break  # end of file before ``size`` bytes: a short read, reported as such
                chunks.append(chunk)
                got += len(chunk)
            return size, chunks[0] if len(chunks) == 1 else b"".join(chunks)
        finally:
            os.close(fd)

    def read_into(
        self, path: str, buffer: memoryview, limit: int | None = None, accept: Accept | None = None
    ) -> tuple[int, int]:
        """Read a file of exactly ``len(buffer)`` bytes into ``buffer`` with ``readv`` (S3, S4)."""
        fd = _open_for_read(path)
        try:
            st = _file_stat(os.fstat(fd))
            check_opened(path, st, limit, accept)
            size = st.size
            if size != len(buffer):
                return size, 0
            got = os.readv(fd, [buffer])  # the whole page in one call, as a rule
            while got < size:
                n = os.readv(fd, [buffer[got:]])
                if not n:
                    break
                got += n
            return size, got
        finally:
            os.close(fd)

    def write_new(self, path: str, data: memoryview, mode: int = 0o600) -> None:
        """Create the file with ``O_EXCL | O_NOFOLLOW``, ``fchmod`` it to ``mode`` and write ``data`` (S2)."""
        fd = os.open(path, _WRITE_FLAGS, mode)
        try:
            os.fchmod(fd, mode)  # exactly ``mode``, whatever the umask took away (S2)
            done = 0  # ``data`` is a flat byte view (the store casts it once)
            while done < len(data):
                done += os.write(fd, data[done:])
        finally:
            os.close(fd)

    def replace(self, src: str, dst: str) -> None:
        """Rename atomically with ``os.replace``."""
        os.replace(src, dst)

    def unlink(self, path: str) -> None:
        """Remove the node with ``os.unlink``."""
        os.unlink(path)

    def mkdir(self, path: str, mode: int = 0o700, gid: int | None = None) -> FileStat:
        """Make the directory and its parents, with group and mode if made here (S1); answer its ``lstat``."""
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)  # a concurrent creator in another process is fine (F8)
        try:
            os.mkdir(path, mode)
        except FileExistsError:
            pass  # made by another process (or there already): the caller checks what it is (S1)
        else:
            if gid is not None:
                os.chown(path, -1, gid)
            os.chmod(path, mode)  # exactly ``mode`` (after chown, which may clear the set-group-id bit)
        return _file_stat(os.lstat(path))

    def scandir(self, path: str) -> Iterator[DirEntry]:
        """List the directory through a descriptor, one ``lstat`` per entry relative to it."""
        new, is_file = tuple.__new__, stat_module.S_ISREG
        fields = operator.attrgetter("st_size", "st_mtime", "st_uid", "st_gid", "st_mode")  # one C call
        # Listed through a descriptor: each entry's lstat is then an fstatat relative to it, which spares
        # the kernel the walk of ``path`` once per entry.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # removed by another process during the pass: not there any more
                    size, mtime, uid, gid, mode = fields(st)
                    kind = "file" if is_file(mode) else kind_of(mode)
                    # tuple.__new__: the NamedTuple's own __new__ is a Python function, a step per entry
                    yield new(DirEntry, (entry.name, size, mtime, kind, uid, gid, mode & 0o7777))
        finally:
            os.close(fd)

    def resolve(self, path: str) -> str:
        """Resolve symlinks with ``os.path.realpath``."""
        return os.path.realpath(path)

    def euid(self) -> int:
        """Return ``os.geteuid()``."""
        return os.geteuid()

    def free_bytes(self, path: str) -> int:
        """Return the bytes available to unprivileged writers (``statvfs``: ``f_bavail * f_frsize``)."""
        st = os.statvfs(path)
        return st.f_bavail * st.f_frsize

    def capacity_bytes(self, path: str) -> int:
        """Return the filesystem's size (``statvfs``: ``f_blocks * f_frsize``)."""
        st = os.statvfs(path)
        return st.f_blocks * st.f_frsize

    def try_lock(self, path: str, mode: int = 0o600) -> int | None:
        """Take a non-blocking ``flock(LOCK_EX)`` on the lock file; None when another open file holds it."""
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def unlock(self, handle: int) -> None:
        """Close the lock file's descriptor, which releases its ``flock``."""
        os.close(handle)  # closing the last descriptor of the open file releases its flock

    def now(self) -> float:
        """Return ``time.time()``, the clock of modification times."""
        return time.time()
