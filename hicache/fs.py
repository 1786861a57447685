"""The filesystem port of the file store: the few operations it needs, and the OS implementation.

What it is for: :class:`~hicache.file_store.HiCacheFile` and
:class:`~hicache.file_evictor.LRUFileEvictor` touch the disk only through a
:class:`FileSystem`, so tests can put an in-memory fake behind them that fails
on demand (ENOSPC, EIO, EPERM, short reads) and crashes between any two
operations (``spec/fake_fs.py``).  Every operation is one call, so counting
calls counts filesystem round trips (what docs/SEMANTICS.md F6 and F5 promise to
keep low).

Contract of every method: failures are ``OSError`` subclasses carrying an
``errno`` (``FileNotFoundError`` for a missing file); nothing else is raised
for an I/O problem.  Paths are ``str``.

* ``stat(path)``: size and modification time (wall-clock seconds).
* ``read_file(path)``: ``(size, data)``: the size the open file had and the
  bytes read; ``len(data) < size`` is a short read.
* ``read_into(path, buffer)``: ``(size, read)``: the size of the open file and
  how many bytes went into ``buffer``; nothing is read (``read == 0``) unless
  ``size == len(buffer)``, so a file of another layout is never copied in.
* ``write_new(path, data)``: create ``path`` (which must not exist) holding
  ``data``, a C-contiguous buffer (``os.write`` takes no other; anything else
  is a caller bug: ``BufferError``).  On failure a partial file may remain: the
  caller removes it.
* ``replace(src, dst)``: atomic rename over ``dst``.
* ``unlink(path)``; ``mkdir(path)`` (parents too, an existing one is fine).
* ``scandir(path)``: one pass over a directory: ``DirEntry(name, size, mtime)``
  of its regular files (a file that vanishes during the pass is left out).
* ``free_bytes(path)``: bytes available to unprivileged writers.
* ``now()``: the wall-clock time that modification times are measured in.

Complexity: one system call (or a few for read/write) per operation, except
``scandir``, which is O(files).  Thread model: stateless; safe from any thread.
"""

from __future__ import annotations

import os
import stat as stat_module
import time
from collections.abc import Iterator
from typing import NamedTuple, Protocol

__all__ = ["DirEntry", "FileStat", "FileSystem", "OSFileSystem"]


class FileStat(NamedTuple):
    """Size in bytes and modification time (wall-clock seconds) of one file."""

    size: int
    mtime: float


class DirEntry(NamedTuple):
    """One regular file found by :meth:`FileSystem.scandir`."""

    name: str
    size: int
    mtime: float


class FileSystem(Protocol):
    """The operations the file store performs on its directory (see the module docstring)."""

    def stat(self, path: str) -> FileStat: ...

    def read_file(self, path: str) -> tuple[int, bytes]: ...

    def read_into(self, path: str, buffer: memoryview) -> tuple[int, int]: ...

    def write_new(self, path: str, data: memoryview) -> None: ...

    def replace(self, src: str, dst: str) -> None: ...

    def unlink(self, path: str) -> None: ...

    def mkdir(self, path: str) -> None: ...

    def scandir(self, path: str) -> Iterator[DirEntry]: ...

    def free_bytes(self, path: str) -> int: ...

    def now(self) -> float: ...


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
        st = os.stat(path)
        return FileStat(st.st_size, st.st_mtime)

    def read_file(self, path: str) -> tuple[int, bytes]:
        with open(path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            chunks = []
            got = 0
            while got < size:
                chunk = f.read(size - got)
                if not chunk:
                    break  # end of file before ``size`` bytes: a short read, reported as such
                chunks.append(chunk)
                got += len(chunk)
            return size, b"".join(chunks)

    def read_into(self, path: str, buffer: memoryview) -> tuple[int, int]:
        with open(path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            if size != len(buffer):
                return size, 0
            got = 0
            while got < size:
                n = f.readinto(buffer[got:])
                if not n:
                    break
                got += n
            return size, got

    def write_new(self, path: str, data: memoryview) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            done = 0  # ``data`` is a flat byte view (the store casts it once)
            while done < len(data):
                done += os.write(fd, data[done:])
        finally:
            os.close(fd)

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def mkdir(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)  # a concurrent creator in another process is fine (F8)

    def scandir(self, path: str) -> Iterator[DirEntry]:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed by another process during the pass: not there any more
                if stat_module.S_ISREG(st.st_mode):
                    yield DirEntry(entry.name, st.st_size, st.st_mtime)

    def free_bytes(self, path: str) -> int:
        st = os.statvfs(path)
        return st.f_bavail * st.f_frsize

    def now(self) -> float:
        return time.time()
