"""The filesystem port's contract (hicache/fs.py), held by the OS implementation and the in-memory fake alike.

Every store test that runs on ``spec.world.filesystem.FakeFileSystem`` trusts the fake to behave like the
disk on the
operations the port names.  These tests state that contract once and run it against both: the real
``OSFileSystem`` in a temporary directory and the fake.  They are also the tests that kill mutants of
``hicache/fs.py`` (``make mutation``).
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hicache.fs import DirEntry, FileStat, FileSystem, NotAPageError, OSFileSystem
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

pytestmark = pytest.mark.clauses("F2", "F3", "F7", "F8")


@pytest.fixture(params=["os", "fake"])
def port(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FileSystem, str]]:
    """(filesystem, an existing empty directory on it)."""
    if request.param == "os":
        yield OSFileSystem(), str(tmp_path)
    else:
        fs = FakeFileSystem(FakeClock(1000.0))
        fs.mkdir("/store")
        yield fs, "/store"


def test_write_new_then_stat_and_both_reads_return_the_bytes(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    path = f"{d}/a.bin"
    fs.write_new(path, memoryview(b"hello world"))
    st = fs.stat(path)
    assert isinstance(st, FileStat)
    assert st.size == 11
    assert abs(st.mtime - fs.now()) < 60
    assert fs.read_file(path) == (11, b"hello world")
    buffer = bytearray(11)
    assert fs.read_into(path, memoryview(buffer)) == (11, 11)
    assert bytes(buffer) == b"hello world"


def test_a_large_value_is_written_and_read_whole(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    data = os.urandom(3 * 1024 * 1024 + 17)  # several write()/read() calls on the real disk
    fs.write_new(f"{d}/big.bin", memoryview(data))
    assert fs.read_file(f"{d}/big.bin") == (len(data), data)
    buffer = bytearray(len(data))
    assert fs.read_into(f"{d}/big.bin", memoryview(buffer)) == (len(data), len(data))
    assert buffer == data


def test_an_empty_file_reads_as_empty(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    fs.write_new(f"{d}/e.bin", memoryview(b""))
    assert fs.stat(f"{d}/e.bin").size == 0
    assert fs.read_file(f"{d}/e.bin") == (0, b"")
    assert fs.read_into(f"{d}/e.bin", memoryview(bytearray())) == (0, 0)


def test_read_into_copies_nothing_into_a_buffer_of_another_size(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    fs.write_new(f"{d}/a.bin", memoryview(b"abcdef"))
    for size in (5, 7):
        buffer = bytearray(b"\x00" * size)
        assert fs.read_into(f"{d}/a.bin", memoryview(buffer)) == (6, 0)
        assert buffer == b"\x00" * size


def test_write_new_refuses_an_existing_path_and_leaves_it_alone(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    fs.write_new(f"{d}/a.bin", memoryview(b"first"))
    with pytest.raises(FileExistsError) as caught:
        fs.write_new(f"{d}/a.bin", memoryview(b"second"))
    assert caught.value.errno == errno.EEXIST
    assert fs.read_file(f"{d}/a.bin") == (5, b"first")


def test_missing_files_raise_file_not_found_with_enoent(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    missing = f"{d}/missing.bin"
    for call in (
        lambda: fs.stat(missing),
        lambda: fs.read_file(missing),
        lambda: fs.read_into(missing, memoryview(bytearray(1))),
        lambda: fs.unlink(missing),
        lambda: fs.replace(missing, f"{d}/other.bin"),
    ):
        with pytest.raises(FileNotFoundError) as caught:
            call()
        assert caught.value.errno == errno.ENOENT


def test_replace_moves_atomically_over_an_existing_target(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    fs.write_new(f"{d}/.tmp1", memoryview(b"new"))
    fs.write_new(f"{d}/a.bin", memoryview(b"old value"))
    fs.replace(f"{d}/.tmp1", f"{d}/a.bin")
    assert fs.read_file(f"{d}/a.bin") == (3, b"new")
    with pytest.raises(FileNotFoundError):
        fs.stat(f"{d}/.tmp1")
    assert sorted(e.name for e in fs.scandir(d)) == ["a.bin"]


def test_unlink_removes_the_file(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    fs.write_new(f"{d}/a.bin", memoryview(b"x"))
    fs.unlink(f"{d}/a.bin")
    with pytest.raises(FileNotFoundError):
        fs.stat(f"{d}/a.bin")
    assert list(fs.scandir(d)) == []


def test_mkdir_creates_parents_and_accepts_an_existing_directory(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    nested = f"{d}/x/y/z"
    fs.mkdir(nested)
    fs.mkdir(nested)  # a second creator (another process, F8) is fine
    fs.write_new(f"{nested}/a.bin", memoryview(b"ok"))
    assert fs.read_file(f"{nested}/a.bin") == (2, b"ok")


def test_scandir_lists_every_node_with_its_kind_and_not_what_is_inside_a_subdirectory(
    port: tuple[FileSystem, str],
) -> None:
    fs, d = port
    fs.write_new(f"{d}/a.bin", memoryview(b"12345"))
    fs.write_new(f"{d}/.x.tmp", memoryview(b"12"))
    fs.mkdir(f"{d}/sub")
    fs.write_new(f"{d}/sub/inner.bin", memoryview(b"1"))
    entries = sorted(fs.scandir(d))
    assert [(e.name, e.kind) for e in entries] == [(".x.tmp", "file"), ("a.bin", "file"), ("sub", "dir")]
    assert [e.size for e in entries[:2]] == [2, 5]
    assert all(isinstance(e, DirEntry) and e.uid == fs.euid() for e in entries)
    assert all(abs(e.mtime - fs.now()) < 60 for e in entries[:2])
    assert entries[1].mtime == fs.stat(f"{d}/a.bin").mtime


def test_scandir_of_a_missing_directory_raises(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    with pytest.raises(FileNotFoundError):
        list(fs.scandir(f"{d}/nowhere"))


def test_free_bytes_is_a_plausible_positive_figure(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    free = fs.free_bytes(d)
    assert isinstance(free, int)
    assert free > 0


def test_os_free_bytes_is_what_statvfs_gives_unprivileged_writers(tmp_path: Path) -> None:
    st = os.statvfs(tmp_path)
    free = OSFileSystem().free_bytes(str(tmp_path))
    # f_bavail (not f_bfree: root's reserve is not ours) times the fragment size; allow for other writers.
    assert abs(free - st.f_bavail * st.f_frsize) <= 64 * 1024 * 1024
    if st.f_bfree > st.f_bavail:
        assert free < st.f_bfree * st.f_frsize


def test_os_now_is_the_wall_clock_that_modification_times_use(tmp_path: Path) -> None:
    fs = OSFileSystem()
    before = fs.now()
    fs.write_new(str(tmp_path / "a.bin"), memoryview(b"x"))
    mtime = fs.stat(str(tmp_path / "a.bin")).mtime
    assert before - 5 <= mtime <= fs.now() + 5
    assert abs(fs.now() - os.stat(tmp_path / "a.bin").st_mtime) < 60


@pytest.mark.clauses("S3")
def test_os_scandir_lists_a_symlink_as_a_symlink_without_following_it(tmp_path: Path) -> None:
    (tmp_path / "real.bin").write_bytes(b"abc")
    (tmp_path / "link.bin").symlink_to(tmp_path / "real.bin")
    kinds = sorted((e.name, e.kind) for e in OSFileSystem().scandir(str(tmp_path)))
    assert kinds == [("link.bin", "symlink"), ("real.bin", "file")]


def test_os_scandir_leaves_out_a_file_removed_during_the_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file another process deletes between the directory read and its stat is simply not listed."""
    for name in ("a.bin", "b.bin", "c.bin"):
        (tmp_path / name).write_bytes(b"x")
    real_scandir = os.scandir

    class Vanishing:
        def __init__(self, entries: list[os.DirEntry[str]]) -> None:
            self.entries = entries

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    def scandir_then_delete_b(path: int) -> Vanishing:  # the port lists through a directory descriptor
        with real_scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
        os.unlink(tmp_path / "b.bin")
        return Vanishing(entries)

    monkeypatch.setattr(os, "scandir", scandir_then_delete_b)
    assert [e.name for e in OSFileSystem().scandir(str(tmp_path))] == ["a.bin", "c.bin"]


def test_os_read_file_reports_a_file_that_shrank_after_open_as_a_short_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size is the open file's (fstat); bytes no longer there make a short read, not a hang."""
    path = tmp_path / "a.bin"
    path.write_bytes(b"0123456789")
    real_fstat = os.fstat

    def fstat_then_truncate(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        os.truncate(path, 4)
        return st

    monkeypatch.setattr(os, "fstat", fstat_then_truncate)
    assert OSFileSystem().read_file(str(path)) == (10, b"0123")
    path.write_bytes(b"0123456789")
    buffer = bytearray(10)
    assert OSFileSystem().read_into(str(path), memoryview(buffer)) == (10, 4)
    assert buffer[:4] == b"0123"


def test_os_reads_assemble_a_value_delivered_in_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """read()/readinto() may return fewer bytes than asked (pipes, network filesystems): the loop goes on."""
    path = tmp_path / "a.bin"
    data = bytes(range(256)) * 40
    path.write_bytes(data)
    real_read, real_readinto = io.FileIO.read, io.FileIO.readinto

    class Trickle(io.FileIO):
        def read(self, size: int | None = -1, /) -> bytes:
            return real_read(self, min(size if size is not None else 1000, 1000))

        def readinto(self, buffer: object, /) -> int:
            view = memoryview(buffer)  # type: ignore[arg-type]
            return real_readinto(self, view[:1000])

    monkeypatch.setattr("builtins.open", lambda p, mode, buffering: Trickle(p, "r"))
    assert OSFileSystem().read_file(str(path)) == (len(data), data)
    buffer = bytearray(len(data))
    assert OSFileSystem().read_into(str(path), memoryview(buffer)) == (len(data), len(data))
    assert buffer == data


def test_os_write_new_writes_a_value_the_kernel_takes_in_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    sizes: list[int] = []

    def small_writes(fd: int, data: memoryview) -> int:
        n = real_write(fd, data[:777])
        sizes.append(n)
        return n

    monkeypatch.setattr(os, "write", small_writes)
    data = os.urandom(5000)
    OSFileSystem().write_new(str(tmp_path / "a.bin"), memoryview(data))
    assert (tmp_path / "a.bin").read_bytes() == data
    assert len(sizes) == 7


def test_os_write_new_closes_its_descriptor_when_the_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[int] = []
    real_close = os.close

    def failing_write(fd: int, data: memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def recording_close(fd: int) -> None:
        closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(os, "write", failing_write)
    monkeypatch.setattr(os, "close", recording_close)
    with pytest.raises(OSError) as caught:
        OSFileSystem().write_new(str(tmp_path / "a.bin"), memoryview(b"data"))
    assert caught.value.errno == errno.ENOSPC
    assert len(closed) == 1
    assert (tmp_path / "a.bin").exists()  # the partial file stays for the caller to remove (port contract)


@pytest.mark.clauses("S2", "F1-fanout")
@pytest.mark.parametrize("mode", [0o600, 0o660])
def test_a_write_that_fails_leaves_its_partial_file_with_exactly_the_mode_asked(
    port: tuple[FileSystem, str], monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    """The file is made with its mode before a byte is written (``os.open``, ``fchmod``): a write that fails
    leaves a partial file of that mode (the fake once left 0600 whatever was asked, so a shared group's
    fanout marker that could not be written looked private)."""
    fs, d = port
    if isinstance(fs, FakeFileSystem):
        fs.fail("write", errno.EIO)
    else:

        def failing_write(fd: int, data: memoryview) -> int:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "write", failing_write)
    with pytest.raises(OSError) as caught:
        fs.write_new(f"{d}/a.bin", memoryview(b"data"), mode)
    monkeypatch.undo()
    assert caught.value.errno == errno.EIO
    assert fs.stat(f"{d}/a.bin").mode == mode


@pytest.mark.clauses("S2")
@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
@pytest.mark.parametrize("mode", [0o600, 0o660])
def test_os_write_new_creates_the_file_with_exactly_the_mode_whatever_the_umask(
    tmp_path: Path, umask: int, mode: int
) -> None:
    old = os.umask(umask)
    try:
        OSFileSystem().write_new(str(tmp_path / "a.bin"), memoryview(b"x"), mode)
    finally:
        os.umask(old)
    assert (tmp_path / "a.bin").stat().st_mode & 0o7777 == mode


@pytest.mark.clauses("S2")
def test_os_write_new_does_not_follow_a_symlink_planted_at_its_name(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_bytes(b"untouched")
    (tmp_path / "a.tmp").symlink_to(target)
    with pytest.raises(FileExistsError):
        OSFileSystem().write_new(str(tmp_path / "a.tmp"), memoryview(b"x"))
    assert target.read_bytes() == b"untouched"


@pytest.mark.clauses("S1")
@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_os_mkdir_creates_the_directory_with_exactly_the_mode_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    old = os.umask(umask)
    try:
        st = OSFileSystem().mkdir(str(tmp_path / "p" / "d"), 0o700)
    finally:
        os.umask(old)
    assert (tmp_path / "p" / "d").stat().st_mode & 0o7777 == 0o700
    assert st.kind == "dir" and st.mode == 0o700 and st.uid == os.geteuid()


@pytest.mark.clauses("S1")
def test_os_mkdir_of_an_existing_directory_keeps_its_mode_and_reports_it(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir(mode=0o755)
    os.chmod(tmp_path / "d", 0o777)
    st = OSFileSystem().mkdir(str(tmp_path / "d"))
    assert st.mode == 0o777 and (tmp_path / "d").stat().st_mode & 0o777 == 0o777


@pytest.mark.clauses("S3")
def test_os_stat_describes_a_symlink_itself_and_reads_refuse_it(tmp_path: Path) -> None:
    (tmp_path / "real.bin").write_bytes(b"secret")
    (tmp_path / "link.bin").symlink_to(tmp_path / "real.bin")
    fs = OSFileSystem()
    assert fs.stat(str(tmp_path / "link.bin")).kind == "symlink"
    with pytest.raises(NotAPageError) as caught:  # O_NOFOLLOW: ELOOP, reported as not a page
        fs.read_file(str(tmp_path / "link.bin"))
    assert caught.value.stat.kind == "symlink"
    assert isinstance(caught.value.__cause__, OSError) and caught.value.__cause__.errno == errno.ELOOP
    with pytest.raises(NotAPageError):
        fs.read_into(str(tmp_path / "link.bin"), memoryview(bytearray(6)))


@pytest.mark.clauses("S3")
def test_os_reads_of_a_fifo_neither_block_nor_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f.bin")
    fs = OSFileSystem()
    assert fs.stat(str(tmp_path / "f.bin")).kind == "fifo"
    with pytest.raises(NotAPageError):
        fs.read_file(str(tmp_path / "f.bin"))
    with pytest.raises(NotAPageError):
        fs.read_into(str(tmp_path / "f.bin"), memoryview(bytearray(0)))


@pytest.mark.clauses("S3")
def test_reads_refuse_a_directory_and_a_file_the_reader_does_not_accept(port: tuple[FileSystem, str]) -> None:
    fs, d = port
    fs.mkdir(f"{d}/sub.bin")
    with pytest.raises(NotAPageError):
        fs.read_file(f"{d}/sub.bin")
    fs.write_new(f"{d}/a.bin", memoryview(b"abc"))
    with pytest.raises(NotAPageError) as caught:
        fs.read_file(f"{d}/a.bin", accept=lambda st: st.uid == -1)
    assert caught.value.stat.kind == "file"
    with pytest.raises(NotAPageError):
        fs.read_into(f"{d}/a.bin", memoryview(bytearray(3)), accept=lambda st: False)
    assert fs.read_file(f"{d}/a.bin", accept=lambda st: st.kind == "file") == (3, b"abc")


@pytest.mark.parametrize("pieces", [False, True], ids=["whole", "in-pieces"])
def test_os_read_file_reads_the_size_the_open_file_had_even_if_it_grows_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: bool
) -> None:
    """Another process appending after the size was taken: exactly ``size`` bytes come back (the port's
    contract), never the appended ones, read whole or delivered in pieces."""
    path = tmp_path / "a.bin"
    data = bytes(range(200)) * 20
    path.write_bytes(data)
    real_fstat = os.fstat

    def fstat_then_append(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        with open(path, "ab") as f:
            f.write(b"APPENDED")
        return st

    monkeypatch.setattr(os, "fstat", fstat_then_append)
    if pieces:
        real_read = io.FileIO.read

        class Trickle(io.FileIO):
            def read(self, size: int | None = -1, /) -> bytes:
                want = 3000 if size is None or size < 0 else min(size, 3000)  # 4000 bytes: two pieces
                return real_read(self, want)

        monkeypatch.setattr("builtins.open", lambda p, mode, buffering=-1: Trickle(p, mode.replace("b", "")))
    assert OSFileSystem().read_file(str(path)) == (len(data), data)


def test_write_new_refuses_a_non_contiguous_buffer_as_a_caller_bug(port: tuple[FileSystem, str]) -> None:
    """Like os.write, the fake refuses a strided view (BufferError, not an OSError the store would log):
    the store must hand over a contiguous copy.  A fake that accepted it hid exactly that bug once."""
    fs, d = port
    with pytest.raises(BufferError):
        fs.write_new(f"{d}/a.bin", memoryview(bytearray(b"AaBb"))[::2])
