"""O4: FakeOS's descriptor calls (issue 31): ``os.open`` and what is called on what it opened,
``fcntl.flock``, ``os.chmod``/``chown``/``lstat``/``statvfs``, each on the fake filesystem, counted, hooked
and faulted as the machine arms it; the project's own ``OSFileSystem`` and ``HiCacheFile`` run on it
through interposed ``os``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from types import ModuleType
from typing import Any

import pytest

import hicache.file_store
import hicache.fs
from hicache import HiCacheFile
from hicache.fs import NotAPageError, OSFileSystem
from spec.oracle import check
from spec.oracle._fs import FakeOS, interpose_fs, restore
from spec.oracle._time import MISSING
from spec.world.clock import FakeClock
from spec.world.filesystem import Crash, FakeFileSystem

READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _world(disk_size: int = 1 << 20) -> tuple[FakeFileSystem, FakeOS]:
    fs = FakeFileSystem(FakeClock(100.0), disk_size=disk_size)
    fs.make_dir("/d")
    return fs, FakeOS(fs)


def _reads_what_was_opened(fake: FakeOS) -> bool:
    """os.read gives the bytes the node held at the open, though the path was replaced since."""
    fs = fake.fs
    assert fs is not None
    fs.put("/d/a.bin", b"old")
    fd = fake.os.open("/d/a.bin", READ)
    fs.put("/d/a.bin", b"new!")  # another process replaces the file: the descriptor keeps the old one
    try:
        return bool(fake.os.read(fd, 10) == b"old" and fake.os.fstat(fd).st_size == 3)
    finally:
        fake.os.close(fd)


class _LiveReads(FakeOS):
    """A wrong fd table: os.read reads the node now at the path, not the one opened."""

    def _read(self, fd: int, n: int) -> bytes:
        opened = self.descriptors[fd]
        assert self.fs is not None
        return self.fs.files[opened.path].data[:n]


@pytest.mark.clauses("O4")
def test_os_read_reads_the_node_as_opened_and_a_live_reading_variant_is_caught() -> None:
    assert _reads_what_was_opened(_world()[1])
    fs = FakeFileSystem(FakeClock(0.0))
    fs.make_dir("/d")
    wrong = _LiveReads(fs)
    wrong.os.read = wrong._read  # type: ignore[attr-defined]
    assert not _reads_what_was_opened(wrong)


@pytest.mark.clauses("O4", "S3")
def test_os_open_refuses_a_symlink_with_o_nofollow_and_the_port_names_it_not_a_page() -> None:
    fs, fake = _world()
    fs.plant("/d/l.bin", "symlink")
    with pytest.raises(OSError) as raised:
        fake.os.open("/d/l.bin", READ)
    assert raised.value.errno == errno.ELOOP
    with pytest.raises(FileNotFoundError):
        fake.os.open("/d/missing.bin", READ)
    with _interposed(fake, hicache.fs), pytest.raises(NotAPageError):
        OSFileSystem().read_file("/d/l.bin")


@pytest.mark.clauses("O4", "S2")
def test_os_open_creates_exclusively_and_os_write_lands_in_the_fake() -> None:
    fs, fake = _world()
    fd = fake.os.open("/d/n.tmp", CREATE, 0o666)
    assert stat.S_IMODE(fake.os.fstat(fd).st_mode) == 0o644  # less the fake's umask
    fake.os.fchmod(fd, 0o600)
    assert fake.os.write(fd, memoryview(b"abc")) == 3 and fake.os.write(fd, b"de") == 2
    fake.os.close(fd)
    node = fs.files["/d/n.tmp"]
    assert node.data == b"abcde" and node.mode == 0o600 and node.uid == fs.uid
    with pytest.raises(FileExistsError):
        fake.os.open("/d/n.tmp", CREATE, 0o600)
    fs.plant("/d/s.tmp", "symlink")
    with pytest.raises(FileExistsError):  # O_EXCL: a symlink there is not followed
        fake.os.open("/d/s.tmp", CREATE, 0o600)
    with pytest.raises(OSError) as raised:
        fake.os.read(fd, 1)  # closed
    assert raised.value.errno == errno.EBADF


@pytest.mark.clauses("O4", "B2", "S8")
def test_the_machines_faults_reach_os_write_as_oserrors() -> None:
    fs, fake = _world(disk_size=4)
    fd = fake.os.open("/d/n.tmp", CREATE, 0o600)
    with pytest.raises(OSError) as raised:
        fake.os.write(fd, b"abcdef")
    assert raised.value.errno == errno.ENOSPC and fs.files["/d/n.tmp"].data == b"abcd"
    fs.fail("write", errno.EIO)
    with pytest.raises(OSError) as raised:
        fake.os.write(fd, b"")
    assert raised.value.errno == errno.EIO
    fake.os.close(fd)
    fs.fail("write", errno.EIO)
    with pytest.raises(OSError):  # the create is a write too: a fault there fails it
        fake.os.open("/d/m.tmp", CREATE, 0o600)


@pytest.mark.clauses("O4", "C4")
def test_a_crash_during_os_write_leaves_half_and_every_later_call_dies() -> None:
    fs, fake = _world()
    fd = fake.os.open("/d/n.tmp", CREATE, 0o600)
    fs.crash_after(0)
    with pytest.raises(Crash):
        fake.os.write(fd, b"abcd")
    assert fs.files["/d/n.tmp"].data == b"ab"
    with pytest.raises(Crash):
        fake.os.fstat(fd)


@pytest.mark.clauses("O4")
def test_os_fstat_lstat_chmod_chown_and_statvfs_answer_from_the_fake() -> None:
    fs, fake = _world()
    fs.put("/d/a.bin", b"xyz", mtime=42.0)
    fd = fake.os.open("/d/a.bin", READ)
    st = fake.os.fstat(fd)
    assert stat.S_ISREG(st.st_mode) and st.st_size == 3 and st.st_mtime == 42.0 and st.st_uid == fs.uid
    fake.os.close(fd)
    fs.plant("/d/f.bin", "fifo")
    fd = fake.os.open("/d/f.bin", READ)  # O_NONBLOCK: a FIFO opens, and fstat says what it is
    assert stat.S_ISFIFO(fake.os.fstat(fd).st_mode)
    fake.os.close(fd)
    fake.os.chmod("/d/a.bin", 0o640)
    assert stat.S_IMODE(fake.os.lstat("/d/a.bin").st_mode) == 0o640
    fake.os.chown("/d", -1, 1234)
    assert fs.dir_meta["/d"][1] == 1234
    with pytest.raises(PermissionError):
        fake.os.chown("/d/a.bin", 0, -1)  # a user that is not root gives nothing away
    assert fake.os.statvfs("/d").f_bavail == fs.disk_size - 3
    assert fake.os.geteuid() == fs.uid


@pytest.mark.clauses("O4", "C6")
def test_flock_on_a_lock_file_excludes_another_descriptor_until_closed() -> None:
    fs, fake = _world()
    flags = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    first, second = fake.os.open("/d/.x.lock", flags, 0o600), fake.os.open("/d/.x.lock", flags, 0o600)
    fake.fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with pytest.raises(BlockingIOError):
        fake.fcntl.flock(second, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert "/d/.x.lock" not in fs.files  # the lock table, not a file: listings stay those of pages
    fake.os.close(first)
    fake.fcntl.flock(second, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fake.os.close(second)
    assert not fs.locks


@pytest.mark.clauses("O4")
def test_every_descriptor_call_is_counted_and_hooked() -> None:
    fs, fake = _world()
    fs.put("/d/a.bin", b"abcd")
    seen: list[str] = []
    fs.before = lambda op, path: seen.append(op)
    with _interposed(fake, hicache.fs):
        assert OSFileSystem().read_into("/d/a.bin", memoryview(bytearray(4))) == (4, 4)
    assert fake.calls["os.open"] == fake.calls["os.fstat"] == fake.calls["os.readv"] == 1
    assert fake.calls["os.close"] == 1
    assert seen == ["read", "os.fstat", "os.readv", "os.close"]
    assert fs.calls["read"] == 1  # the port's one read operation, as with the fake injected


@pytest.mark.clauses("O4")
def test_a_short_read_fault_is_taken_at_the_first_read() -> None:
    fs, fake = _world()
    fs.put("/d/a.bin", b"abcd")
    fs.short_reads(1)
    with _interposed(fake, hicache.fs):
        assert OSFileSystem().read_file("/d/a.bin") == (4, b"ab")
        assert OSFileSystem().read_file("/d/a.bin") == (4, b"abcd")


@pytest.mark.clauses("O4", "F3", "F4", "F8")
def test_the_project_store_runs_on_the_fake_through_interposed_os() -> None:
    """Issue 31 part 4: HiCacheFile with no fs= given, its modules' os and fcntl the fake's."""
    fs, fake = _world()
    with _interposed(fake, hicache.fs, hicache.file_store):
        store = HiCacheFile("/d/store", namespace="_r0", extra_config={"max_size": 100})
        assert store.set("k", b"value") and store.get("k") == b"value" and store.exists("k")
        other = HiCacheFile("/d/store", namespace="_r0")  # C6: a second live store on the namespace
        assert other.get("k") == b"value"
        assert store.clear() and not store.exists("k")
        del store, other
    assert sorted(fs.listing("/d/store")) == []
    assert fake.calls["os.write"] >= 1 and fake.calls["fcntl.flock"] == 2 and not fake.unsupported


class _Interposed:
    def __init__(self, fake: FakeOS, modules: tuple[Any, ...]) -> None:
        self.fake, self.modules = fake, modules
        self.done: list[tuple[Any, dict[str, Any]]] = []

    def __enter__(self) -> FakeOS:
        self.done = [(m, interpose_fs(m, self.fake)) for m in self.modules]
        return self.fake

    def __exit__(self, *exc: object) -> None:
        for module, replaced in reversed(self.done):
            restore(module, replaced)


def _interposed(fake: FakeOS, *modules: Any) -> _Interposed:
    return _Interposed(fake, modules)


@pytest.mark.clauses("O4", "F8")
def test_a_module_that_reaches_the_fake_reads_its_clock_as_time_time() -> None:
    """The port's now() (temp files' ages, F8) is the fake filesystem's clock, as its mtimes are; a module
    that reaches no filesystem keeps the real time module."""
    import time

    _fs, fake = _world()
    with _interposed(fake, hicache.fs):
        assert OSFileSystem().now() == 100.0
    assert vars(hicache.fs)["time"] is time
    plain = ModuleType("plain")
    exec("import time\n", vars(plain))
    assert interpose_fs(plain, fake) == {"open": MISSING} and vars(plain)["time"] is time


@pytest.mark.slow("an oracle search of the project's store behind the interposed os")
@pytest.mark.clauses("O4", "O12")
def test_the_project_store_passes_the_oracle_with_its_os_interposed() -> None:
    """Issue 31 part 4: hicache:HiCacheFile with fs omitted is run through interposed os, fcntl and its
    port's wall clock, and PASSes (it could not before: os.open was unsupported, a usage error)."""
    result = check("file-store", HiCacheFile, adapter={"omit": ["fs"]}, max_examples=50)
    assert result.verdict == "PASS", result.summary()
    assert "fcntl, os, time in module hicache.fs" in str(result.fs_control)
