"""The filesystem under the oracle's control (O4): inject the machine's fake one, or interpose it as ``os``.

A file-evictor or file-store target whose constructor takes ``fs`` gets the
machine's :class:`~spec.world.filesystem.FakeFileSystem` (``injected``).  A target that
calls ``os``, ``os.path``, ``open`` or ``shutil`` itself gets, for the duration
of the run, stand-ins for those names (the modules, their functions bound by
name as in ``from os import remove``, and the builtin ``open``, which a global
``open`` shadows) in the globals of every module that may touch the disk for
it, found as :mod:`spec.oracle._time` finds those that read the clock.  The
stand-ins act on the fake filesystem of the example under way (:class:`FakeOS`),
so the machine's faults (an unremovable file, a file gone behind the target's
back, a full disk) reach the target as real ``OSError``s.  The real modules are
never touched.

It is verified, not assumed: :class:`FakeOS` counts every call it receives, an
audit hook records every real filesystem call the process makes under the fake
directories while the run is under way, and a function the fake does not
provide raises and is named.  A run in which the target never called the fake,
touched the real disk there, or called an unsupported function is a usage error
(exit 2), never a verdict reported as controlled.
"""

from __future__ import annotations

import builtins
import errno
import fcntl as real_fcntl
import io
import os as real_os
import posixpath
import shutil as real_shutil
import stat as stat_module
import sys
import tempfile
import time as real_time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import cache, partial
from types import ModuleType
from typing import Any, NoReturn

from hicache.fs import FileStat

from .. import PACKAGE
from ..world.filesystem import FakeFile, FakeFileSystem
from ._errors import OracleUsageError
from ._time import MISSING, Interposition, restore, time_modules

__all__ = ["FakeOS", "FsControl", "RealDiskWatch", "interpose_fs", "restore", "unsupported_call"]

os_stat_result = real_os.stat_result

_KIND_BITS = {
    "file": stat_module.S_IFREG,
    "dir": stat_module.S_IFDIR,
    "symlink": stat_module.S_IFLNK,
    "fifo": stat_module.S_IFIFO,
    "socket": stat_module.S_IFSOCK,
    "device": stat_module.S_IFCHR,
}

# Functions of ``os``, ``os.path`` and ``shutil`` that reach the filesystem; those FakeOS does not
# implement raise in the fake modules, and are named.
_OS_FS_FUNCTIONS = [
    *("listdir", "scandir", "walk", "fwalk", "stat", "lstat", "statvfs", "access", "readlink", "getcwd"),
    *("mkdir", "makedirs", "mkfifo", "mknod", "open", "link", "symlink", "truncate", "utime", "chdir"),
    *("remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace", "chmod", "chown", "lchown"),
    *("chroot", "read", "readv", "write", "writev", "pread", "pwrite", "fstat", "close", "fchmod", "fchown"),
    *("ftruncate", "fsync", "fdatasync", "lseek", "dup", "dup2", "geteuid", "getuid", "getegid", "getgid"),
    "getgroups",
]
_PATH_FS_FUNCTIONS = [
    *("exists", "lexists", "isfile", "isdir", "islink", "realpath", "samefile"),
    *("getsize", "getmtime", "getatime", "getctime"),
]
_SHUTIL_FS_FUNCTIONS = ["rmtree", "copyfile", "copy", "copy2", "move", "disk_usage", "copytree"]
_FCNTL_FS_FUNCTIONS = ["flock", "lockf", "fcntl", "ioctl"]
# os.open's flags the stand-in understands (any other is named unsupported); O_CLOEXEC, O_NONBLOCK and
# O_NOFOLLOW change nothing on the fake but what they say (no exec, nothing blocks, a symlink is ELOOP).
_OPEN_FLAGS = (
    real_os.O_RDONLY
    | real_os.O_WRONLY
    | real_os.O_CREAT
    | real_os.O_EXCL
    | real_os.O_CLOEXEC
    | real_os.O_NOFOLLOW
    | real_os.O_NONBLOCK
    | real_os.O_DIRECTORY
)


def _stat_result(st: FileStat) -> os_stat_result:
    mode = _KIND_BITS.get(st.kind, stat_module.S_IFREG) | st.mode
    return real_os.stat_result((mode, 0, 0, 1, st.uid, st.gid, st.size, st.mtime, st.mtime, st.mtime))


def _statvfs(fs: FakeFileSystem, path: str) -> Any:
    free, blocks = fs.free_bytes(path), fs.capacity_bytes(path)
    return real_os.statvfs_result((1, 1, blocks, free, free, 1 << 20, 1 << 20, 1 << 20, 0, 255))


def _disk_usage(fs: FakeFileSystem, path: str) -> Any:
    total, free = fs.capacity_bytes(path), fs.free_bytes(path)
    return real_shutil._ntuple_diskusage(total, total - free, free)


def _kind(fs: FakeFileSystem, path: str) -> str:
    """The kind of the node at ``path``, "" where there is none (the tests of ``os.path`` answer False)."""
    try:
        return fs.stat(path).kind
    except (OSError, ValueError):
        return ""


# The functions that are one call of the fake filesystem on their path arguments, made plain (keywords
# such as ``dir_fd`` or ``follow_symlinks`` are taken and ignored): qualified name -> (fs, *paths) -> answer.
_IGNORED = frozenset({"dir_fd", "src_dir_fd", "dst_dir_fd", "follow_symlinks", "strict"})
_ONE_CALL: dict[str, Callable[..., Any]] = {
    "os.remove": FakeFileSystem.unlink,
    "os.unlink": FakeFileSystem.unlink,
    "os.stat": lambda fs, path: _stat_result(fs.stat(path)),
    "os.lstat": lambda fs, path: _stat_result(fs.stat(path)),
    "os.listdir": lambda fs, path=".": [entry.name for entry in fs.scandir(path)],
    "os.statvfs": _statvfs,
    "os.replace": FakeFileSystem.replace,
    "os.rename": FakeFileSystem.replace,
    "os.path.getsize": lambda fs, path: fs.stat(path).size,
    "os.path.getmtime": lambda fs, path: fs.stat(path).mtime,
    "os.path.realpath": lambda fs, path: fs.resolve(posixpath.abspath(path)),
    "shutil.disk_usage": _disk_usage,
    "os.path.exists": lambda fs, path: _kind(fs, path) not in ("", "symlink"),
    "os.path.lexists": lambda fs, path: _kind(fs, path) != "",
    "os.path.isfile": lambda fs, path: _kind(fs, path) == "file",
    "os.path.isdir": lambda fs, path: _kind(fs, path) == "dir",
    "os.path.islink": lambda fs, path: _kind(fs, path) == "symlink",
}


class FakeOS:
    """``os``, ``os.path``, ``shutil`` and ``open`` over a :class:`FakeFileSystem`, counting their calls.

    ``fs`` is the fake filesystem the calls act on (the oracle points it at each example's);
    ``calls`` counts the calls by name (``os.remove``, ``os.path.getsize``, ``open``, ...);
    ``unsupported`` the names of functions the target called that the fake does not provide.

    >>> from spec.world.clock import FakeClock
    >>> fake = FakeOS(FakeFileSystem(FakeClock(0.0)))
    >>> fake.os.makedirs("/d", exist_ok=True)
    >>> with fake.open("/d/a.bin", "wb") as f:
    ...     _ = f.write(b"abc")
    >>> fake.os.listdir("/d"), fake.os.path.getsize("/d/a.bin"), fake.os.stat("/d/a.bin").st_size
    (['a.bin'], 3, 3)
    >>> fake.os.remove("/d/a.bin"); fake.os.path.exists("/d/a.bin"), fake.calls["os.remove"]
    (False, 1)
    """

    def __init__(self, fs: FakeFileSystem | None = None) -> None:
        self.fs: FakeFileSystem | None = fs
        # O12: real directory -> the fake directory it stands for (the engine form's, see real_dir)
        self.real_dirs: dict[str, str] = {}
        self._made: weakref.WeakKeyDictionary[FakeFileSystem, dict[str, str]] = weakref.WeakKeyDictionary()
        self.calls: Counter[str] = Counter()
        self.unsupported: list[str] = []
        self.faked: list[tuple[ModuleType, ModuleType, list[str]]] = []  # (real, fake, its functions faked)
        self.os = self._module(real_os, "os", _OS_FS_FUNCTIONS)
        self.path = self.os.path = self._module(posixpath, "os.path", _PATH_FS_FUNCTIONS)  # type: ignore[attr-defined]
        self.shutil = self._module(real_shutil, "shutil", _SHUTIL_FS_FUNCTIONS)
        self.fcntl = self._module(real_fcntl, "fcntl", _FCNTL_FS_FUNCTIONS)
        # the descriptors os.open handed out and not yet closed: fd -> what it is open on
        self.descriptors: dict[int, _Descriptor] = {}
        modules = {"os": self.os, "os.path": self.path, "shutil": self.shutil}
        for qualified, act in _ONE_CALL.items():
            module, _, name = qualified.rpartition(".")
            setattr(modules[module], name, self._function(qualified, act))
        for function in (self._scandir, self._makedirs, self._mkdir):  # the methods below, as os.scandir...
            setattr(self.os, function.__name__[1:], function)
        functions: tuple[Callable[..., Any], ...] = (
            *(self._open, self._read, self._readv, self._write, self._fstat, self._close, self._fchmod),
            *(self._chmod, self._chown, self._geteuid, self._getuid, self._getegid, self._getgid),
            self._getgroups,
        )
        for one in functions:
            setattr(self.os, one.__name__[1:], one)
        self.fcntl.flock = self._flock  # type: ignore[attr-defined]
        # ``time`` as a module that reaches the fake sees it: time.time() is the fake filesystem's clock
        self.wall_time = ModuleType(
            "time", "the oracle's view of the time module: the fake filesystem's clock"
        )
        self.wall_time.__dict__.update({k: v for k, v in vars(real_time).items() if not k.startswith("__")})
        self.wall_time.time = self._wall_clock  # type: ignore[attr-defined]
        self.wall_time.time_ns = lambda: int(self._wall_clock() * 1e9)  # type: ignore[attr-defined]
        for method in (self._rmtree, self._move):
            setattr(self.shutil, method.__name__[1:], method)

    def real_dir(self, directory: str) -> str:
        """O12: the fresh private real directory that stands for the fake ``directory`` of the world under
        way (made on first use, removed with its world).  A target whose own C code writes a file there
        (the engine's ``numpy.tofile``) leaves it for the stand-ins: the next stand-in call that names
        the path takes it into the fake world as the target's write (counted, faulted, its mtime the fake
        clock's) and removes the real one, so the machine's world stays the one truth."""
        fs = self.fs
        if fs is None:
            raise OSError(errno.EIO, "the oracle's fake filesystem is not set up")
        made = self._made.setdefault(fs, {})
        fake = posixpath.normpath(directory)
        if fake not in made:
            real = tempfile.mkdtemp(prefix="hicache-oracle-engine-")
            made[fake] = real
            self.real_dirs[real] = fake
            weakref.finalize(fs, _remove_real_dir, self.real_dirs, real)
        return made[fake]

    def _path(self, path: Any) -> Any:
        """A real directory's path as the fake one it stands for (O12), a file the target's C code wrote
        there taken in first; any other path as it is."""
        if not isinstance(path, str) or not self.real_dirs:
            return path
        for real, fake in list(self.real_dirs.items()):
            if path == real or path.startswith(real + "/"):
                mapped = fake + path[len(real) :]
                if path != real and real_os.path.isfile(path) and not real_os.path.islink(path):
                    self._take_in(path, mapped)
                return mapped
        return path

    def _take_in(self, real: str, mapped: str) -> None:
        """The bytes a target's C code wrote at ``real`` become its write of ``mapped`` in the fake world."""
        watch = disk_watch()
        active, watch.active = watch.active, False  # the oracle's own reading, not the target's
        try:
            with builtins.open(real, "rb") as file:
                data = file.read()
            real_os.unlink(real)
        finally:
            watch.active = active
        self._fs("os.write (numpy)").write_new(mapped, memoryview(data))

    def _fs(self, name: str) -> FakeFileSystem:
        self.calls[name] += 1
        if self.fs is None:
            raise OSError(errno.EIO, "the oracle's fake filesystem is not set up")
        return self.fs

    def _module(self, real: ModuleType, prefix: str, functions: list[str]) -> ModuleType:
        """A copy of ``real`` whose filesystem ``functions`` raise and are named (NotImplementedError)."""
        fake = ModuleType(real.__name__, f"the oracle's controlled view of {prefix} (a fake filesystem)")
        fake.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
        for function in functions:
            if hasattr(real, function):
                setattr(fake, function, self._unsupported(f"{prefix}.{function}"))
        self.faked.append((real, fake, functions))
        return fake

    def _unsupported(self, qualified: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.unsupported.append(qualified)
            raise NotImplementedError(unsupported_call(qualified))

        call.__name__ = qualified.rsplit(".", 1)[-1]
        return call

    def _function(self, qualified: str, act: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            paths = {k: self._path(real_os.fspath(v)) for k, v in kwargs.items() if k not in _IGNORED}
            fs = self._fs(qualified)
            return act(fs, *(self._path(real_os.fspath(a)) for a in args), **paths)

        call.__name__ = qualified.rsplit(".", 1)[-1]
        return call

    def _scandir(self, path: Any = ".") -> _ScanDir:
        if isinstance(path, int) and not isinstance(path, bool):  # a directory's descriptor (os.open)
            opened = self._descriptor("os.scandir", path)
            if opened.kind != "dir":
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", opened.path)
            entries = list(self._fs_quiet().scandir(opened.path))
            # an entry's stat is the listing's, as an fstatat through the descriptor: no call of its own
            return _ScanDir([_FakeDirEntry(self, e.name, e, listed=True) for e in entries])
        directory = real_os.fspath(path)
        entries = list(self._fs("os.scandir").scandir(self._path(directory)))
        return _ScanDir([_FakeDirEntry(self, directory, e) for e in entries])

    # -- descriptors: os.open and the calls on what it opened --------------------------------------------

    def _descriptor(self, name: str, fd: Any) -> _Descriptor:
        """The open descriptor ``fd`` (``name`` counted); EBADF for one this fake did not hand out."""
        self.calls[name] += 1
        found = self.descriptors.get(fd) if isinstance(fd, int) and not isinstance(fd, bool) else None
        if found is None:
            raise OSError(errno.EBADF, f"Bad file descriptor (not one the oracle's {name} opened)", fd)
        return found

    def _open(self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
        """``os.open`` on the fake: ``O_RDONLY`` (the node as it is at the open: its bytes are what the
        descriptor reads), ``O_CREAT | O_EXCL | O_WRONLY`` (a new empty file, EEXIST when anything is
        there; ``mode`` less the fake's umask), ``O_CREAT`` alone on a missing path (a lock file: the
        fake filesystem keeps locks, not lock files, so that listings stay those of pages)."""
        if flags & ~_OPEN_FLAGS or dir_fd is not None or flags & real_os.O_RDWR == real_os.O_RDWR:
            self._refuse(f"os.open(flags={flags:#o})")
        name = posixpath.normpath(self._path(real_os.fspath(path)))
        fs = self._fs("os.open")
        if flags & real_os.O_WRONLY:
            if not flags & real_os.O_CREAT or not flags & real_os.O_EXCL:
                self._refuse("os.open(O_WRONLY without O_CREAT | O_EXCL)")
            fs.write_new(name, memoryview(b""), mode & 0o7777 & ~fs.umask)  # EEXIST, faults, crash: a write
            node = fs.files.get(name)
            if node is None:  # removed by another thread between the two: as a real file unlinked
                node = FakeFile(b"", fs.now(), uid=fs.uid, gid=fs.gid, mode=mode & 0o7777 & ~fs.umask)
            return self._hand_out(_Descriptor(name, "write", node.stat(), b"", node))
        if flags & real_os.O_CREAT and name not in fs.files and name not in fs.dirs:
            if flags & real_os.O_EXCL:
                self._refuse("os.open(O_RDONLY | O_CREAT | O_EXCL)")
            fs.descriptor_call("open", name)
            if posixpath.dirname(name) not in fs.dirs:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)
            st = FileStat(0, fs.now(), "file", fs.uid, fs.gid, mode & 0o7777 & ~fs.umask)
            return self._hand_out(_Descriptor(name, "lock", st, b"", None))
        if name in fs.dirs:  # a directory (to list it): no read; listing it is the port's scandir
            fs.descriptor_call("open", name)
            uid, gid, dir_mode = fs.dir_meta.get(name, (0, 0, 0o755))
            return self._hand_out(
                _Descriptor(name, "dir", FileStat(0, 0.0, "dir", uid, gid, dir_mode), b"", None)
            )
        try:
            st, data, node = fs.open_node(name)
        except OSError as error:
            if error.errno == errno.ELOOP and not flags & real_os.O_NOFOLLOW:
                self._refuse("os.open of a symlink without O_NOFOLLOW")
            raise
        if flags & real_os.O_DIRECTORY and st.kind != "dir":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", name)
        return self._hand_out(_Descriptor(name, st.kind if st.kind == "dir" else "read", st, data, node))

    def _refuse(self, qualified: str) -> NoReturn:
        self.unsupported.append(qualified)
        raise NotImplementedError(unsupported_call(qualified))

    def _hand_out(self, descriptor: _Descriptor) -> int:
        """A new descriptor number: a real one, of ``/dev/null`` (so that no number the fake hands out is
        ever one the process uses for something else, and a store's finalizer that closes it with the real
        ``os`` after the run closes only that)."""
        fd = real_os.open(real_os.devnull, real_os.O_RDONLY | real_os.O_CLOEXEC)
        self.descriptors[fd] = descriptor
        return fd

    def _bytes_read(self, opened: _Descriptor, fs: FakeFileSystem) -> bytes:
        """The bytes the descriptor reads: those the node held at the open (a short-read fault, armed in
        the machine, cut at the first read)."""
        if opened.kind != "read":
            raise OSError(errno.EISDIR if opened.kind == "dir" else errno.EBADF, "not open for reading")
        if not opened.read_once:
            opened.read_once = True
            opened.data = fs.take_short(opened.data)
        return opened.data

    def _read(self, fd: int, n: int) -> bytes:
        opened = self._descriptor("os.read", fd)
        fs = self._fs_quiet()
        fs.descriptor_call("os.read", opened.path)
        data = self._bytes_read(opened, fs)
        chunk = data[opened.position : opened.position + max(n, 0)]
        opened.position += len(chunk)
        return chunk

    def _readv(self, fd: int, buffers: Any) -> int:
        opened = self._descriptor("os.readv", fd)
        fs = self._fs_quiet()
        fs.descriptor_call("os.readv", opened.path)
        data = self._bytes_read(opened, fs)
        done = 0
        for buffer in buffers:
            view = memoryview(buffer).cast("B")
            chunk = data[opened.position : opened.position + len(view)]
            view[: len(chunk)] = chunk
            opened.position += len(chunk)
            done += len(chunk)
            if len(chunk) < len(view):
                break
        return done

    def _write(self, fd: int, data: Any) -> int:
        opened = self._descriptor("os.write", fd)
        if opened.kind != "write" or opened.node is None:
            raise OSError(errno.EBADF, "Bad file descriptor (not open for writing)", fd)
        view = memoryview(data)
        return self._fs_quiet().append(opened.path, opened.node, view.cast("B") if view.ndim != 1 else view)

    def _fstat(self, fd: int) -> os_stat_result:
        """The opened node's stat: a written file as it is now, a read one as it was at the open."""
        opened = self._descriptor("os.fstat", fd)
        self._fs_quiet().descriptor_call("os.fstat", opened.path)
        node = opened.node
        return _stat_result(node.stat() if node is not None and opened.kind == "write" else opened.stat)

    def _fchmod(self, fd: int, mode: int) -> None:
        opened = self._descriptor("os.fchmod", fd)
        self._fs_quiet().descriptor_call("os.fchmod", opened.path)
        if opened.node is not None:
            opened.node.mode = mode & 0o7777
        opened.stat = opened.stat._replace(mode=mode & 0o7777)

    def _close(self, fd: int) -> None:
        """Close ``fd``: its lock (``fcntl.flock``) goes with it, as with the last descriptor of a file."""
        if isinstance(fd, int) and fd not in self.descriptors:  # opened by the real os before the stand-ins
            self.calls["os.close"] += 1  # went in (a probe's lock file, closed by its finalizer): closed as
            real_os.close(fd)  # the real os would (nothing of the disk: the open was the access)
            return
        opened = self._descriptor("os.close", fd)
        del self.descriptors[fd]
        real_os.close(fd)  # the /dev/null behind the number (see _hand_out)
        fs = self._fs_quiet()
        if opened.lock is not None:
            fs.unlock(opened.lock)
        if opened.kind != "lock":  # a lock file's is closed by a store's finalizer, at any point: no hooks
            fs.descriptor_call("os.close", opened.path)

    def _flock(self, fd: int, operation: int) -> None:
        """``fcntl.flock`` on the fake's per-path lock table (``FakeFileSystem.try_lock``): an exclusive
        lock held through another descriptor is ``BlockingIOError`` with ``LOCK_NB``; waiting for it
        would wait forever in one thread, so a blocking request of a held lock is named unsupported."""
        opened = self._descriptor("fcntl.flock", fd)
        fs = self._fs_quiet()
        fs.descriptor_call("fcntl.flock", opened.path)
        if operation & real_fcntl.LOCK_UN:
            if opened.lock is not None:
                fs.unlock(opened.lock)
                opened.lock = None
            return
        if not operation & (real_fcntl.LOCK_EX | real_fcntl.LOCK_SH) or opened.lock is not None:
            return
        handle = fs.try_lock(opened.path)
        if handle is None:
            if not operation & real_fcntl.LOCK_NB:
                self._refuse("fcntl.flock (blocking, on a lock another descriptor holds)")
            raise BlockingIOError(errno.EWOULDBLOCK, "Resource temporarily unavailable", opened.path)
        opened.lock = handle

    def _chmod(self, path: Any, mode: int, *, dir_fd: Any = None, follow_symlinks: bool = True) -> None:
        name = posixpath.normpath(self._path(real_os.fspath(path)))
        fs = self._fs("os.chmod")
        fs.descriptor_call("os.chmod", name)
        if name in fs.dirs:
            uid, gid, _mode = fs.dir_meta.get(name, (0, 0, 0o755))
            fs.dir_meta[name] = (uid, gid, mode & 0o7777)
        elif name in fs.files:
            fs.files[name].mode = mode & 0o7777
        else:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)

    def _chown(
        self, path: Any, uid: int, gid: int, *, dir_fd: Any = None, follow_symlinks: bool = True
    ) -> None:
        """``os.chown``: the group (or owner) of a node; a process not root gives a node to no other user."""
        name = posixpath.normpath(self._path(real_os.fspath(path)))
        fs = self._fs("os.chown")
        fs.descriptor_call("os.chown", name)
        if name in fs.dirs:
            owner, group, mode = fs.dir_meta.get(name, (0, 0, 0o755))
        elif name in fs.files:
            node = fs.files[name]
            owner, group, mode = node.uid, node.gid, node.mode
        else:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)
        if (uid not in (-1, owner) or owner != fs.uid) and fs.uid != 0:
            raise PermissionError(errno.EPERM, "Operation not permitted", name)
        owner, group = owner if uid == -1 else uid, group if gid == -1 else gid
        if name in fs.dirs:
            fs.dir_meta[name] = (owner, group, mode)
        else:
            fs.files[name].uid, fs.files[name].gid = owner, group

    def _geteuid(self) -> int:
        return self._fs("os.geteuid").uid

    def _getuid(self) -> int:
        return self._fs("os.getuid").uid

    def _getegid(self) -> int:
        return self._fs("os.getegid").gid

    def _getgid(self) -> int:
        return self._fs("os.getgid").gid

    def _getgroups(self) -> list[int]:
        return [self._fs("os.getgroups").gid]

    def _wall_clock(self) -> float:
        """The fake filesystem's clock (the one its modification times come from); not a filesystem call."""
        return self._fs_quiet().now()

    def _fs_quiet(self) -> FakeFileSystem:
        """The fake filesystem, for a call already counted."""
        if self.fs is None:
            raise OSError(errno.EIO, "the oracle's fake filesystem is not set up")
        return self.fs

    def _makedirs(self, name: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        path = posixpath.normpath(self._path(real_os.fspath(name)))
        fs = self._fs("os.makedirs")
        if path in fs.dirs and not exist_ok:
            raise FileExistsError(errno.EEXIST, "File exists", path)
        fs.mkdir(path, mode & 0o777)

    def _mkdir(self, path: str, mode: int = 0o777, *, dir_fd: Any = None) -> None:
        name = posixpath.normpath(self._path(real_os.fspath(path)))
        fs = self._fs("os.mkdir")
        if name in fs.dirs or name in fs.files:
            raise FileExistsError(errno.EEXIST, "File exists", name)
        if posixpath.dirname(name) not in fs.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)
        fs.mkdir(name, mode & 0o777)

    def _rmtree(self, path: str, ignore_errors: bool = False, onerror: Any = None, **_: Any) -> None:
        fs = self._fs("shutil.rmtree")
        root = posixpath.normpath(self._path(real_os.fspath(path)))
        for name in [p for p in fs.files if p == root or p.startswith(root + "/")]:
            try:
                fs.unlink(name)
            except OSError:
                if not ignore_errors:
                    raise

    def _move(self, src: str, dst: str, **_: Any) -> str:
        self._fs("shutil.move").replace(self._path(real_os.fspath(src)), self._path(real_os.fspath(dst)))
        return dst

    def open(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        """The builtin ``open`` on the fake: whole-file reads and writes (``r``, ``w``, ``x``, ``a``)."""
        path = posixpath.normpath(self._path(real_os.fspath(file)))
        fs = self._fs("open")
        binary = "b" in mode
        if "r" in mode and "+" not in mode:
            _size, data = fs.read_file(path)
            return io.BytesIO(data) if binary else io.StringIO(data.decode(kwargs.get("encoding") or "utf-8"))
        if not any(m in mode for m in "wxa"):
            self.unsupported.append(f"open(mode={mode!r})")
            raise NotImplementedError(unsupported_call(f"open(mode={mode!r})"))
        exists = path in fs.files
        if "x" in mode and exists:
            raise FileExistsError(errno.EEXIST, "File exists", path)
        initial = fs.read_file(path)[1] if "a" in mode and exists else b""
        return _WriteOnClose(fs, path, initial, binary, kwargs.get("encoding") or "utf-8")


class _Descriptor:
    """What one of the fake's descriptors is open on: ``kind`` ``read`` (the node's bytes and stat as at
    the open), ``write`` (a file it created: ``node``, written through), ``dir`` or ``lock``."""

    __slots__ = ("data", "kind", "lock", "node", "path", "position", "read_once", "stat")

    def __init__(self, path: str, kind: str, stat: FileStat, data: bytes, node: FakeFile | None) -> None:
        self.path, self.kind, self.stat, self.data, self.node = path, kind, stat, data, node
        self.position = 0
        self.read_once = False
        self.lock: int | None = None  # the fake's lock handle while this descriptor holds a flock


class _FakeDirEntry:
    """What ``os.scandir`` yields, on the fake."""

    def __init__(self, owner: FakeOS, directory: str, entry: Any, *, listed: bool = False) -> None:
        self._owner, self._entry, self._listed = owner, entry, listed
        self.name = entry.name
        self.path = entry.name if listed else posixpath.join(directory, entry.name)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return bool(self._entry.kind == "file")

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return bool(self._entry.kind == "dir")

    def is_symlink(self) -> bool:
        return bool(self._entry.kind == "symlink")

    def stat(self, *, follow_symlinks: bool = True) -> os_stat_result:
        if self._listed:
            self._owner.calls["os.DirEntry.stat"] += 1
            e = self._entry
            return _stat_result(FileStat(e.size, e.mtime, e.kind, e.uid, e.gid, e.mode))
        return _stat_result(self._owner._fs("os.DirEntry.stat").stat(self._owner._path(self.path)))

    def inode(self) -> int:
        return 0


class _ScanDir(AbstractContextManager["_ScanDir"], Iterator[_FakeDirEntry]):
    """What ``os.scandir`` returns: an iterator that is also a context manager."""

    def __init__(self, entries: list[_FakeDirEntry]) -> None:
        self._entries = iter(entries)

    def __next__(self) -> _FakeDirEntry:
        return next(self._entries)

    def __exit__(self, *exc: object) -> None:
        return None

    close = __exit__


class _WriteOnClose(io.BytesIO):
    """A file opened for writing on the fake: the bytes land (through a temp file and a rename) on close."""

    def __init__(self, fs: FakeFileSystem, path: str, initial: bytes, binary: bool, encoding: str) -> None:
        super().__init__()
        self._fs, self._path, self._binary, self._encoding = fs, path, binary, encoding
        super().write(initial)

    def write(self, data: Any) -> int:
        super().write(data if self._binary else str(data).encode(self._encoding))
        return len(data)

    def close(self) -> None:
        if not self.closed:
            data = self.getvalue()
            temp = posixpath.join(posixpath.dirname(self._path), f".oracle-{id(self):x}.part")
            self._fs.write_new(temp, memoryview(data))
            self._fs.replace(temp, self._path)
        super().close()


def _remove_real_dir(real_dirs: dict[str, str], real: str) -> None:
    """O12: a world's real directory goes with it (out of the watched roots first)."""
    real_dirs.pop(real, None)
    real_shutil.rmtree(real, ignore_errors=True)


def unsupported_call(name: str) -> str:
    return (
        f"the target called {name}, which the oracle's fake filesystem does not provide: the run cannot "
        "control it. Give the target an fs parameter, or keep to os.remove/unlink/stat/lstat/listdir/"
        "scandir/statvfs/makedirs/mkdir/replace/rename/chmod/chown, os.open (to read; to create with O_EXCL; "
        "a lock file) with os.read/readv/write/fstat/fchmod/close, fcntl.flock, os.path, open and "
        "shutil.rmtree/move/disk_usage"
    )


def interpose_fs(module: ModuleType, fake: FakeOS) -> dict[str, Any]:
    """Point ``module``'s view of ``os``, ``os.path``, ``shutil``, their filesystem functions bound by name,
    and ``open`` at ``fake``.  Returns the globals it replaced (name -> original; a missing ``open`` global
    is recorded as :data:`MISSING`) so the caller can restore them."""
    stand_ins: dict[int, Any] = {}
    for real, stand_in, names in fake.faked:
        stand_ins[id(real)] = stand_in
        stand_ins.update({id(getattr(real, n)): getattr(stand_in, n) for n in names if hasattr(real, n)})
    namespace = vars(module)
    replaced = {name: v for name, v in namespace.items() if not name.startswith("__") and id(v) in stand_ins}
    namespace.update({name: stand_ins[id(v)] for name, v in replaced.items()})
    # The wall clock of the fake's modification times: a module that reaches the fake filesystem and reads
    # time.time itself (OSFileSystem.now, against which temp files' ages are measured, F8) reads the fake
    # filesystem's clock, unless the oracle's time control already patched it (it is then the same clock).
    wall = [name for name, v in namespace.items() if v is real_time and not name.startswith("__")]
    if replaced and wall:
        for name in wall:
            replaced[name] = namespace[name]
            namespace[name] = fake.wall_time
    if namespace.get("open", builtins.open) is builtins.open:
        replaced["open"] = namespace.get("open", MISSING)
        namespace["open"] = fake.open
    return replaced


class RealDiskWatch:
    """Records the real filesystem calls the process makes under ``roots`` while ``active`` (an audit hook,
    installed once per process, by ``disk_watch``: audit hooks cannot be removed, so it is switched off)."""

    def __init__(self) -> None:
        self.active = False
        self.roots: Callable[[], tuple[str, ...]] = tuple  # the fake's directories, asked at each event
        # O12: the real directories where a new file may be opened for writing (the engine's numpy.tofile;
        # the stand-ins take it into the fake world at the next call that names it)
        self.writable: Callable[[], tuple[str, ...]] = tuple
        self.seen: list[str] = []

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active or not args or not (event == "open" or event.startswith(("os.", "shutil."))):
            return
        path = args[0]
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        if not isinstance(path, str):
            return
        normal = posixpath.normpath(path) if path else path
        writing = event == "open" and len(args) > 1 and isinstance(args[1], str) and "w" in args[1]
        if writing and any(normal.startswith(root + "/") for root in self.writable()):
            return
        if any(normal == root or normal.startswith(root + "/") for root in self.roots()):
            self.seen.append(f"{event} {path}")


@cache
def disk_watch() -> RealDiskWatch:
    """The process's one RealDiskWatch, its audit hook installed at the first call."""
    watch = RealDiskWatch()
    sys.addaudithook(watch._hook)
    return watch


def held_objects(instances: Any, depth: int = 3) -> list[Any]:
    """The objects ``instances`` hold in their attributes (``__dict__`` and ``__slots__``), and those these
    hold, ``depth`` levels down: only instances of classes of the target's own (not the standard
    library's, not torch's or numpy's, not the oracle's), each once."""
    found: dict[int, Any] = {}
    layer = [obj for obj in instances if obj is not None]
    for _ in range(depth):
        kept = []
        for obj in layer:
            values = list(getattr(obj, "__dict__", {}).values())
            for cls in type(obj).__mro__:
                slots = vars(cls).get("__slots__", ())
                for slot in (slots,) if isinstance(slots, str) else slots:
                    values.append(getattr(obj, slot, None))
            for value in values:
                root = getattr(type(value), "__module__", "").partition(".")[0]
                if isinstance(value, type) or id(value) in found:
                    continue
                if root in _NOT_HELD or root in sys.stdlib_module_names:
                    continue
                found[id(value)] = value
                kept.append(value)
        layer = kept
    return list(found.values())


_NOT_HELD = frozenset({"builtins", "torch", "numpy", PACKAGE, "hypothesis"})


def _reached_modules(target: Any) -> list[ModuleType]:
    """The non-standard-library modules a factory function reaches through its closure and the globals its
    code names: modules themselves, and the modules of classes (a class target's own are time_modules')."""
    code = getattr(target, "__code__", None)
    if code is None:
        return []
    namespace = getattr(target, "__globals__", {})
    values = [cell.cell_contents for cell in getattr(target, "__closure__", None) or ()]
    values += [namespace[name] for name in code.co_names if name in namespace]
    found: list[ModuleType] = []
    for value in values:
        module: Any = value if isinstance(value, ModuleType) else None
        if isinstance(value, type):
            module = sys.modules.get(value.__module__)
        name = getattr(module, "__name__", "")
        if module is None or name.partition(".")[0] in sys.stdlib_module_names or name == "builtins":
            continue
        if module is not sys.modules.get(__name__) and module not in found:
            found.append(module)
    return found


class FsControl(Interposition):
    """How one session controls its target's filesystem: ``injected`` (the constructor takes ``fs``),
    ``interposed`` (the target's modules see :class:`FakeOS`), or ``none`` (the component has no disk)."""

    def __init__(self, session: Any) -> None:
        self.mode = "none"
        if "fs" in session.component.constructor:
            self.mode = "injected" if session.accepts("fs") else "interposed"
        # O12: the engine form's shim brings the FakeOS it asks for real directories
        self.fake = getattr(session.target, "_oracle_fake_os", None) or FakeOS()
        self.worlds: list[FakeFileSystem] = []  # every fake filesystem a target was given or shown
        # A factory's class may live in a module it reaches through a closure or a global: interposed
        # before the probe builds one, so that even the probe never reaches the real disk.
        interposed, target = self.mode == "interposed", session.target
        modules = list(dict.fromkeys([*time_modules(target), *_reached_modules(target)]))
        super().__init__(interposed, modules, partial(interpose_fs, fake=self.fake))

    def take(self, init: dict[str, Any]) -> dict[str, Any]:
        """The constructor arguments to pass on: ``fs`` kept when injected, else taken out and shown to the
        target's modules through the fake ``os``."""
        fs = init.get("fs")
        if isinstance(fs, FakeFileSystem) and (not self.worlds or self.worlds[-1] is not fs):
            self.worlds.append(fs)
        if self.mode != "interposed" or "fs" not in init:
            return init
        self.fake.fs = fs
        return {k: v for k, v in init.items() if k != "fs"}

    def add_modules(self, *instances: Any) -> None:
        """Interposed: also the modules of the instances' classes, and of the objects they hold (a store's
        filesystem port: ``HiCacheFile._fs``, an ``OSFileSystem`` of ``hicache.fs``); a usage error when
        none of the modules refers to ``os``, ``os.path``, ``shutil``, ``fcntl`` or their functions (the
        target's disk is out of reach)."""
        self.reach(
            [*instances, *held_objects(instances)],
            "cannot control the filesystem of the target: it takes no fs parameter, and no module of it "
            "or of its classes (%s) refers to os, os.path or shutil. Give its constructor an fs "
            'parameter or map the one it has with an adapter, e.g. --adapter \'{"arguments": '
            '{"__init__": {"fs": "its_name"}}}\'',
        )

    def _around(self, on: bool) -> None:
        """Watch the real disk under the fake's directories while the fake is in, from a clean slate (the
        probe ran before its instance's modules were interposed)."""
        watch = disk_watch()
        watch.roots = self._roots
        watch.writable = lambda: tuple(self.fake.real_dirs)
        watch.active = on
        if on:
            watch.seen.clear()

    def _roots(self) -> tuple[str, ...]:
        """The directories of the fake filesystem under way (and of the probe's)."""
        worlds = [*self.worlds[:1], *([self.fake.fs] if self.fake.fs is not None else [])]
        return tuple({d for fs in worlds for d in fs.dirs if d != "/"} | set(self.fake.real_dirs))

    def calls(self) -> int:
        """The filesystem calls the target made on the fakes (through the fake ``os``, or the port)."""
        if self.mode == "interposed":
            return sum(self.fake.calls.values())
        return sum(sum(fs.calls.values()) for fs in self.worlds)

    def describe(self) -> str:
        if self.mode == "injected":
            return "injected: the machine's fake filesystem is passed as fs="
        if self.mode == "interposed":
            counted = sorted(self.fake.calls.items())
            calls = ", ".join(f"{name} {count}" for name, count in counted) or "no calls"
            return f"interposed: the names {self.where()} (and open) reach the fake filesystem ({calls})"
        return "not applicable (the component has no filesystem)"

    def verify(self, examples: int, calls_expected: bool = True) -> None:
        """O4: a usage error unless the target used the fake filesystem, only it, and what it provides.
        ``calls_expected`` False: the run ended on bad input alone (B1), refused before any I/O, so a
        target that made no call yet is not one that reaches the disk some other way."""
        if self.mode == "none" or examples == 0:
            return
        watch = disk_watch()
        if self.mode == "interposed" and watch.seen:
            seen = ", ".join(dict.fromkeys(watch.seen[:5]))
            watch.seen.clear()
            raise OracleUsageError(
                f"the target touched the real filesystem under the fake one's directories ({seen}): a module "
                "the oracle did not interpose reaches the disk, so a verdict would be one on the real disk. "
                "Give the target an fs parameter, or make that module's os the one its class's module uses"
            )
        if self.fake.unsupported:
            raise OracleUsageError(unsupported_call(self.fake.unsupported[0]))
        if self.calls() == 0 and calls_expected:
            how = "passed as fs=" if self.mode == "injected" else "interposed as os, os.path, shutil and open"
            raise OracleUsageError(
                f"the target never called the filesystem the oracle controls ({how}) in {examples} examples: "
                "it reaches the disk some other way, so a verdict would be one on the real disk"
            )
