"""HiCacheFile itself (hicache/file_store.py): its public API and wiring, write and publish (F2, F3, F5, F7),
the settings that reach the evictor (F9), crashes (C4), the namespace lock (C6), the cap clamped to the disk
and ENOSPC (S8), S2, S6 and S7 on the write path, and what it says when it refuses an argument (B1) or an
I/O operation fails (B2), word for word: each log line must name the operation, the path and the OS error,
and each error the parameter and what was passed."""

from __future__ import annotations

import array
import contextlib
import errno
import gc
import logging
import re
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import pytest

from hicache import HiCacheFile
from hicache.file_config import load_file_config
from hicache.file_evictor import RETRY_UNREMOVABLE_AFTER
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import Crash, FakeFileSystem
from tests.unit._store import DIR, NS, calls, calls_during, order, path, store, warnings_said


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="hicache.file_store")


PATH = "/cache/k_m.bin"


def _nothing(*args: Any) -> None:
    return None


def _written(*pairs: tuple[str, bytes]) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    def write(fs: FakeFileSystem, s: HiCacheFile) -> None:
        for key, value in pairs:
            assert s.set(key, value)

    return write


def _then(
    *steps: Callable[[FakeFileSystem, HiCacheFile], None],
) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    def run(fs: FakeFileSystem, s: HiCacheFile) -> None:
        for step in steps:
            step(fs, s)

    return run


def _fail(op: str, code: int) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    return lambda fs, s: fs.fail(op, code)


def _pin(path: str) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    return lambda fs, s: fs.fail_unlink(path)


def _over_the_limits(fs: FakeFileSystem) -> None:
    fs.mkdir(DIR)
    fs.put(PATH, b"123456")
    fs.fail_unlink(PATH)


def _planted_fifo(fs: FakeFileSystem) -> None:
    fs.make_dir(DIR, mode=0o700)
    fs.plant(PATH, "fifo")


def _into(size: int) -> Callable[[HiCacheFile], tuple[bool, bytes]]:
    """``get_into`` of ``k`` with a buffer of ``size`` dashes: its answer and the buffer after it."""

    def read(s: HiCacheFile) -> tuple[bool, bytes]:
        buffer = bytearray(b"-" * size)
        return s.get_into("k", buffer), bytes(buffer)

    return read


class Said(NamedTuple):
    """One failure or refusal: the disk before the store starts, its configuration, what happens after
    (writes, the armed fault), the operation, its answer, and the whole of each warning line, in order."""

    clauses: tuple[str, ...]
    act: Callable[[HiCacheFile], object]
    answer: object
    lines: tuple[str, ...]
    given: Callable[[FakeFileSystem, HiCacheFile], None] = _nothing
    before: Callable[[FakeFileSystem], None] = _nothing
    config: Mapping[str, Any] = MappingProxyType({})


_K = r"'/cache/k_m\.bin'"


SAID: dict[str, Said] = {
    "read-fails-get": Said(
        ("F4", "B2"),
        lambda s: s.get("k"),
        None,
        (rf"file store: cannot read {_K}: \[Errno 5\] EIO: {_K}",),
        _then(_written(("k", b"abcdef")), _fail("read", errno.EIO)),
    ),
    "read-fails-get_into": Said(
        ("F4", "B2"),
        lambda s: s.get_into("k", bytearray(6)),
        False,
        (rf"file store: cannot read {_K}: \[Errno 5\] EIO: {_K}",),
        _then(_written(("k", b"abcdef")), _fail("read", errno.EIO)),
    ),
    "short-read-get": Said(
        ("F4", "B2"),
        lambda s: s.get("k"),
        None,
        (rf"file store: short read of {_K}: 3 of 6 bytes",),
        _then(_written(("k", b"abcdef")), lambda fs, s: fs.short_reads()),
    ),
    "short-read-get_into": Said(
        ("F4", "B2"),
        lambda s: s.get_into("k", bytearray(6)),
        False,
        (rf"file store: short read of {_K}: 3 of 6 bytes",),
        _then(_written(("k", b"abcdef")), lambda fs, s: fs.short_reads()),
    ),
    "buffer-of-another-size": Said(
        ("F4", "B2"),
        _into(5),
        (False, b"-----"),  # not read, not touched
        (rf"file store: {_K} holds 6 bytes, the buffer 5: not read",),
        _written(("k", b"abcdef")),
    ),
    "delete-fails": Said(
        ("F7", "B2"),
        lambda s: s.delete("k"),
        False,
        (rf"file store: cannot delete {_K}: \[Errno 1\] EPERM: {_K}",),
        _then(_written(("k", b"v")), _pin(PATH)),
    ),
    "clear-cannot-list": Said(
        ("F7", "B2"),
        lambda s: (s.clear(), s.evictor.total),
        (False, 1),  # nothing was removed, so the accounting stays
        (r"file store: cannot list '/cache' to clear it: \[Errno 5\] EIO: '/cache'",),
        _then(_written(("k", b"v")), _fail("scandir", errno.EIO)),
    ),
    "clear-cannot-remove": Said(
        ("F7", "B2"),
        lambda s: (s.clear(), s.evictor.total, "k" in s.evictor, "j" in s.evictor),
        (False, 1, True, False),
        (rf"file store: cannot remove 'k' while clearing: \[Errno 1\] EPERM: {_K}",),
        _then(_written(("k", b"v"), ("j", b"ww")), _pin(PATH)),
    ),
    "no-room": Said(
        ("F3", "C5", "B2"),
        lambda s: s.set("k", b"12345"),
        False,
        (r"file store: no room for 'k' \(5 bytes\): not written",),
        config={"max_size": 4},
    ),
    "write-fails": Said(
        ("F3", "B2"),
        lambda s: s.set("k", b"value"),
        False,
        (rf"file store: cannot write {_K}: \[Errno 28\] ENOSPC: '/cache/\.\w+\.tmp'",),
        _fail("write", errno.ENOSPC),
    ),
    "stat-fails": Said(
        ("F6", "B2"),
        lambda s: s.exists("k"),
        False,
        (rf"file store: cannot stat {_K}: \[Errno 13\] EACCES: {_K}",),
        _then(_written(("k", b"v")), _fail("stat", errno.EACCES)),
    ),
    "start-over-the-limits": Said(
        ("F8", "V5", "B2"),
        lambda s: s.evictor.total,
        6,
        (r"file store: '/cache' is over its limits; nothing more can be evicted",),
        before=_over_the_limits,
        config={"max_size": 4},
    ),
    "start-skips-planted-nodes": Said(
        ("S3", "F8", "B2"),
        lambda s: s.evictor.total,
        0,
        (r"file store: 1 fifo node\(s\) named like pages of namespace '_m' in '/cache': not pages, skipped",),
        before=_planted_fifo,
    ),
    "set-over-a-symlink": Said(
        ("S3", "B2"),
        lambda s: s.set("k", b"mine"),
        False,
        (rf"file store: {_K} is a symlink of uid 1000, not a page: 'k' not written",),
        lambda fs, s: fs.plant(PATH, "symlink"),
    ),
    "read-of-a-planted-node-or-over-max_value_size": Said(
        ("S3", "S4", "B2"),
        lambda s: (s.get("k"), s.get("big")),
        (None, None),
        (
            rf"file store: {_K} is not a page of this store, not read: not a page \(a fifo of uid 1000\)",
            r"file store: '/cache/big_m\.bin' not read: 5 bytes, more than the limit of 4 \(max_value_size\)",
        ),
        _then(lambda fs, s: fs.plant(PATH, "fifo"), lambda fs, s: fs.put(f"{DIR}/big_m.bin", b"12345")),
        config={"max_value_size": 4},
    ),
}


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Python's cyclic collector off for the test: only reference counting frees a store.  A store in a
    reference cycle (its evictor holding its bound methods) would stay, lock and all, until the next
    full collection."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class _CountingOrder(OrderedDict[str, Any]):
    """An LRU order that counts the keys its iterations hand out (a copy of the order hands out all)."""

    visited = 0

    def __iter__(self) -> Iterator[str]:
        for key in super().__iter__():
            _CountingOrder.visited += 1
            yield key


def _evictor_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hicache.file_evictor"]


# -- F2: keys and values ------------------------------------------------------------


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize("value", ["text", 3, None, [1, 2], array.array("b", [1])])
def test_values_that_are_not_bytes_like_are_type_errors(
    fs: FakeFileSystem, clock: FakeClock, value: object
) -> None:
    s = store(fs, clock)
    before = calls(fs)
    with pytest.raises(TypeError, match="value"):
        s.set("k", value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="value"):
        s.batch_set(["a", "k"], [b"fine", value])  # type: ignore[list-item]
    assert calls(fs) == before


@pytest.mark.clauses("F2")
def test_bytearray_and_memoryview_values_are_stored_as_their_bytes(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock)
    assert s.set("a", bytearray(b"ab"))
    assert s.set("b", memoryview(array.array("h", [1, 2])))
    assert s.get("a") == b"ab"
    assert s.get("b") == array.array("h", [1, 2]).tobytes()


# -- F3: set -----------------------------------------------------------------


@pytest.mark.clauses("F3")
def test_set_publishes_through_a_short_hidden_temp_file_and_a_rename(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock)
    temps: list[str] = []
    fs.before = lambda op, path: temps.append(path) if op == "write" else None
    assert s.set("k", b"value")
    name = temps[0].rsplit("/", 1)[1]
    assert name.startswith(".") and name.endswith(".tmp") and len(name) <= 20
    assert fs.calls["replace"] == 1
    assert set(fs.listing(DIR)) == {"k_m.bin"}


@pytest.mark.clauses("F3")
def test_setting_an_existing_key_skips_the_write_and_refreshes_recency(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock)
    assert s.set("a", b"1") and s.set("b", b"2")
    writes = fs.calls["write"]
    assert s.set("a", b"other bytes")
    assert fs.calls["write"] == writes
    assert s.get("a") == b"1"
    assert [e.key for e in s.evictor.snapshot()] == ["b", "a"]


@pytest.mark.clauses("F3", "B2", "C3")
@pytest.mark.parametrize(
    # (ENOSPC on the write is pressure with eviction on, S8: tests/unit/test_file_store_security.py)
    ("op", "code"),
    [("write", errno.EDQUOT), ("write", errno.EIO), ("replace", errno.ENOSPC)],
)
def test_a_failed_write_is_false_with_a_log_line_and_leaves_nothing_behind(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture, op: str, code: int
) -> None:
    s = store(fs, clock, max_size=100, enable_metadata_cache=True)
    assert s.set("a", b"12")
    fs.fail(op, code)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert s.set("k", b"value") is False
    assert "cannot write" in caplog.text
    assert set(fs.listing(DIR)) == {"a_m.bin"}, "the temp file was removed"
    assert s.evictor.total == 2 and "k" not in believed(s)
    assert s.set("k", b"value") and s.get("k") == b"value"
    s.check_invariants()


@pytest.mark.clauses("F3", "B2")
def test_a_write_that_does_not_fit_on_the_disk_is_false(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, disk_size=10)
    s = store(fs, clock)
    assert not s.set("k", b"x" * 11)
    assert fs.listing(DIR) == {} and s.evictor.total == 0


@pytest.mark.clauses("F3", "V3")
def test_a_write_the_evictor_refuses_is_false_and_not_written(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock, max_size=4)
    assert not s.set("k", b"12345")
    assert fs.calls["write"] == 0


# -- F4: get, get_into -------------------------------------------------------


@pytest.mark.clauses("F4", "B1")
@pytest.mark.parametrize("buffer", [b"read-only", "text", 3, memoryview(bytearray(8))[::2]])
def test_get_into_rejects_a_buffer_it_cannot_fill(
    fs: FakeFileSystem, clock: FakeClock, buffer: object
) -> None:
    s = store(fs, clock)
    with pytest.raises((TypeError, ValueError), match="buffer"):
        s.get_into("k", buffer)


# -- F5: batches --------------------------------------------------------------


@pytest.mark.clauses("F5", "B1")
def test_batch_set_needs_one_value_per_key(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    with pytest.raises(ValueError, match="one value per key"):
        s.batch_set(["a", "b"], [b"1"])
    assert fs.calls["write"] == 0


# -- F7: delete and clear ---------------------------------------------------------


@pytest.mark.clauses("F7", "C1")
def test_delete_removes_one_key_and_its_belief(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    assert s.set("a", b"1") and s.set("b", b"22")
    assert s.delete("a") and s.delete("never-set")
    assert not s.exists("a") and s.exists("b")
    assert s.evictor.total == 2


@pytest.mark.clauses("F7", "V5", "B2")
def test_an_unremovable_file_makes_delete_false_and_stays_counted(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True)
    assert s.set("a", b"1")
    fs.fail_unlink(f"{DIR}/a{NS}.bin", errno.EBUSY)
    assert not s.delete("a")
    assert s.evictor.total == 1 and "a" not in believed(s)
    assert s.exists("a"), "a later stat restores the belief"
    assert not s.clear()
    assert s.evictor.total == 1 and s.get("a") == b"1"


@pytest.mark.clauses("F7")
def test_clear_keeps_temp_files_and_other_namespaces(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    fs.put(f"{DIR}/.live-writer.tmp", b"partial")
    fs.put(f"{DIR}/k_other.bin", b"theirs")
    assert s.set("a", b"1") and s.set("b", b"2")
    assert s.clear()
    assert set(fs.listing(DIR)) == {".live-writer.tmp", "k_other.bin"}
    assert s.evictor.total == 0 and not s.exists("a") and "b" not in believed(s)


# -- F8: start-up ---------------------------------------------------------------


@pytest.mark.clauses("F9", "F8")
def test_storage_dir_none_means_the_configured_directory(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = HiCacheFile(extra_config={"storage_dir": "/configured"}, fs=fs, clock=clock)
    assert s.directory == "/configured" and s.set("k", b"v")
    assert set(fs.listing("/configured")) == {"k.bin"}


# -- C4: crashes ---------------------------------------------------------------------


@pytest.mark.clauses("C4", "F8", "C3")
@pytest.mark.parametrize("cap", [0, 10])
def test_a_crash_at_any_point_of_a_set_leaves_whole_values_only(clock: FakeClock, cap: int) -> None:
    for after in range(12):
        fs = FakeFileSystem(clock)
        s = store(fs, clock, max_size=cap, eviction_ratio=0.5)
        assert s.set("old", b"12345") and s.set("kept", b"678")
        fs.crash_after(after)
        with contextlib.suppress(Crash):
            s.set("new", b"abcdefgh")
        fs.restart()
        again = store(fs, clock, max_size=cap, eviction_ratio=0.5)
        assert again.get("new") in (None, b"abcdefgh")
        assert again.get("kept") in ((None, b"678") if cap else (b"678",))
        on_disk = sum(len(f.data) for n, f in fs.listing(DIR).items() if n.endswith(".bin"))
        assert again.evictor.total == on_disk
        clock.advance(3601)
        store(fs, clock, max_size=cap)
        assert not [n for n in fs.listing(DIR) if n.endswith(".tmp")], "stale temp files removed"


# -- B1: construction ------------------------------------------------------------------


@pytest.mark.clauses("B1")
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"namespace": "a/b"}, ValueError, "namespace"),
        ({"namespace": 3}, TypeError, "namespace"),
        ({"storage_dir": 3}, TypeError, "storage_dir"),
        ({"storage_dir": ""}, ValueError, "storage_dir"),
        ({"clock": 3}, TypeError, "clock"),
        ({"extra_config": {"max_size": "lots"}}, ValueError, "max_size"),
        ({"extra_config": {"eviction_ratio": 0}}, ValueError, "eviction_ratio"),
        ({"extra_config": {"metadata_ttl": -2}}, ValueError, "metadata_ttl"),
    ],
)
def test_bad_constructor_arguments_name_the_parameter(
    fs: FakeFileSystem, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    kwargs = {"storage_dir": DIR, "fs": fs, **kwargs}
    with pytest.raises(error, match=match):
        HiCacheFile(**kwargs)


# -- F1: names that cannot collide ------------------------------------------------


@pytest.mark.clauses("F3", "B2")
def test_an_empty_value_fits_on_a_full_disk_and_a_byte_does_not(clock: FakeClock) -> None:
    # Found by the machine under the verify profile: the fake once refused empty writes on an over-full disk.
    fs = FakeFileSystem(clock, disk_size=10)
    fs.mkdir(DIR)
    fs.put(f"{DIR}/someone-else.dat", b"x" * 12)
    s = store(fs, clock)
    assert s.set("empty", b"") and s.get("empty") == b""
    assert not s.set("byte", b"1")


@pytest.mark.clauses("C3", "C5", "F7")
@pytest.mark.parametrize("removal", ["delete", "clear"])
def test_a_removal_between_publication_and_commit_leaves_no_entry_behind(
    fs: FakeFileSystem, clock: FakeClock, removal: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delete/clear that removes a file its writer has published but not committed yet (C5):
    the set linearizes before the removal, so neither the file nor its entry remains."""
    s = store(fs, clock, max_size=100, enable_metadata_cache=True)
    replace = fs.replace

    def replace_then_remove(src: str, dst: str) -> None:
        replace(src, dst)
        if removal == "delete":
            assert s.delete("k")
        else:
            assert s.clear()

    monkeypatch.setattr(fs, "replace", replace_then_remove)
    assert s.set("k", b"abc")
    assert s.evictor.total == 0 and len(s.evictor) == 0
    assert not s.exists("k") and "k" not in believed(s)
    s.check_invariants()


@pytest.mark.clauses("F7", "F6", "C3")
def test_a_clear_that_keeps_an_unremovable_file_counts_it_from_the_listing_without_a_stat(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"1234") and s.set("j", b"12")
    fs.fail_unlink(f"{DIR}/k{NS}.bin")
    answer, spent = calls_during(fs, s.clear)
    assert answer is False
    assert spent == {"scandir": 1, "unlink": 2}
    assert [(e.key, e.size) for e in s.evictor.snapshot()] == [("k", 4)]
    s.check_invariants()


@pytest.mark.clauses("F3", "F6", "V4")
def test_setting_a_believed_key_costs_no_filesystem_call_and_refreshes_recency(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """The belief answers "already stored" (the engine re-offers pages it wrote): no stat, no write."""
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    assert s.set("a", b"1") and s.set("b", b"2")
    answer, spent = calls_during(fs, lambda: s.set("a", b"1"))
    assert answer is True
    assert spent == {}
    assert [e.key for e in s.evictor.snapshot()] == ["b", "a"]
    answer, spent = calls_during(fs, lambda: s.batch_set(["b", "a"], [b"2", b"1"]))
    assert answer == [True, True] and spent == {}
    assert [e.key for e in s.evictor.snapshot()] == ["b", "a"]


@pytest.mark.clauses("F3", "F6")
def test_setting_an_unbelieved_existing_file_costs_one_stat_and_no_write(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True)
    fs.put(f"{DIR}/k{NS}.bin", b"xyz")  # another process wrote it
    answer, spent = calls_during(fs, lambda: s.set("k", b"xyz"))
    assert answer is True and spent == {"stat": 1}
    assert "k" in believed(s) and s.evictor.total == 3


@pytest.mark.clauses("F2", "F3", "C3")
@pytest.mark.parametrize(
    "make",
    [
        lambda: memoryview(array.array("I", [0x41424344, 0x45464748])),
        lambda: memoryview(bytearray(b"ABCDEFGH")).cast("B", (2, 4)),
        lambda: memoryview(bytearray(b"ABCDEFGH")).cast("b"),
    ],
    ids=["uint32-items", "two-dimensional", "signed-bytes"],
)
def test_a_value_of_any_item_format_or_shape_is_stored_and_counted_as_its_bytes(
    fs: FakeFileSystem, clock: FakeClock, make: Any
) -> None:
    """The accounting counts bytes, not items or rows: 2 uint32 or 2 rows of 4 are 8 bytes on disk."""
    s = store(fs, clock, max_size=8)
    value = make()
    assert s.set("k", value)
    assert s.get("k") == value.tobytes()
    assert s.evictor.total == 8 and fs.listing(DIR)[f"k{NS}.bin"].data == value.tobytes()
    assert s.set("j", b"1"), "evicting k made room: its 8 bytes were counted"
    assert "k" not in s.evictor and s.evictor.total == 1
    s.check_invariants()


@pytest.mark.clauses("F3")
def test_temp_names_are_a_dot_twelve_hex_digits_and_tmp_and_differ_per_write(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """17 characters whatever the key (a long key never makes a temp name too long for the filesystem);
    48 random bits, so writers on many hosts sharing one directory do not collide."""
    s = store(fs, clock)
    temps: list[str] = []
    fs.before = lambda op, path: temps.append(path.rsplit("/", 1)[1]) if op == "write" else None
    assert s.set("k" * 200, b"1") and s.set("j", b"2") and s.set("i", b"3")
    assert all(re.fullmatch(r"\.[0-9a-f]{12}\.tmp", name) for name in temps), temps
    assert len(set(temps)) == 3


@pytest.mark.clauses("F1", "F3", "F4")
def test_without_a_filesystem_or_clock_argument_the_store_uses_the_real_ones(tmp_path: Any) -> None:
    s = HiCacheFile(str(tmp_path / "store"), namespace=NS, extra_config={"enable_metadata_cache": True})
    assert s.set("k", b"on disk")
    assert (tmp_path / "store" / f"k{NS}.bin").read_bytes() == b"on disk"
    assert s.get("k") == b"on disk" and s.exists("k") and "k" in believed(s)
    strided = memoryview(bytearray(b"AaBbCcDd"))[::2]  # os.write takes no strided buffer: the store copies it
    assert s.set("s", strided) and s.get("s") == b"ABCD"


@pytest.mark.clauses("F9", "V3")
def test_the_configured_free_space_floor_reaches_the_evictor(clock: FakeClock) -> None:
    """min_free_space: a write that would leave less free space on the disk evicts first (V3)."""
    fs = FakeFileSystem(clock, disk_size=100)
    s = store(fs, clock, min_free_space=50)
    assert s.evictor.min_free_space == 50
    assert s.set("a", b"x" * 40)
    assert s.set("b", b"y" * 40), "room made by evicting a: 100 - 40 >= 50 only without a"
    assert set(fs.listing(DIR)) == {f"b{NS}.bin"}
    assert [e.key for e in s.evictor.snapshot()] == ["b"]


@pytest.mark.clauses("F9", "V3")
def test_the_configured_cap_and_ratio_reach_the_evictor(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock, max_size=10, eviction_ratio=0.5)
    assert (s.evictor.max_size, s.evictor.eviction_ratio) == (10, 0.5)
    for key in "abcd":
        assert s.set(key, b"12")
    assert s.set("e", b"1234")  # 8 + 4 > 10: V3 evicts until total <= floor(10 * 0.5) - 4 = 1
    assert [e.key for e in s.evictor.snapshot()] == ["e"] and s.evictor.total == 4
    assert set(fs.listing(DIR)) == {f"e{NS}.bin"}
    s.check_invariants()


@pytest.mark.clauses("F2", "F3")
def test_a_non_contiguous_value_is_stored_as_its_bytes(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    value = memoryview(bytearray(b"AaBbCcDd"))[::2]
    assert s.set("k", value)
    assert s.get("k") == b"ABCD" and s.evictor.total == 4


@pytest.mark.clauses("C1", "V6")
def test_the_store_and_its_evictor_share_one_lock(fs: FakeFileSystem, clock: FakeClock) -> None:
    """C1 needs the evictor's removal and the store's belief bookkeeping ordered by one lock: an eviction
    (under the evictor's lock) and a probe's belief update (under the store's) must exclude each other."""
    s = store(fs, clock, max_size=10)
    assert s.evictor._lock is s._lock


@pytest.mark.clauses("S8", "V3", "B2")
def test_enospc_relieves_as_for_a_cap_at_the_bytes_the_other_pages_hold(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs = FakeFileSystem(clock, disk_size=100)
    s = store(fs, clock, max_size=50, eviction_ratio=0.5)
    fs.put(f"{DIR}/someone-else.dat", b"o" * 96)  # another program fills the disk; the cap is far
    for key in "abcd":
        assert s.set(key, b"x")
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert s.set("w", b"z")  # ENOSPC: the others hold 4 bytes (not w's 1): down to floor(2) - 1 = 1
    assert order(s) == ["d", "w"]  # a, b and c evicted; counting w's own byte would take d too
    assert caplog.messages[-1] == "file store: evicted to make room on a full disk; retrying 'w'"
    s.check_invariants()


@pytest.mark.clauses("C6", "S2", "B2")
def test_the_namespace_lock_file_is_taken_with_the_page_mode_and_a_refusal_is_logged_exactly(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    modes: list[int] = []
    try_lock = fs.try_lock

    def recording(lock_path: str, mode: int = -1) -> int | None:
        modes.append(mode)
        return try_lock(lock_path, mode)

    monkeypatch.setattr(fs, "try_lock", recording)
    fs.make_dir(DIR, gid=0, mode=0o2770)
    store(fs, clock, shared_group=0)
    HiCacheFile("/private", namespace="_p", fs=fs, clock=clock)
    assert modes == [0o660, 0o600]

    def refused(lock_path: str, mode: int = 0o600) -> int | None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fs, "try_lock", refused)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        store(fs, clock, shared_group=0)
    assert caplog.messages == [
        f"file store: cannot take the lock file '{DIR}/.hicache_m.lock': [Errno 13] Permission denied"
    ]


@pytest.mark.clauses("S8", "B2")
def test_the_cap_is_clamped_to_the_disk_of_the_directory_only_when_above_it_with_exact_lines(
    clock: FakeClock, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = FakeFileSystem(clock, disk_size=100)
    asked: list[str] = []
    capacity = [100]

    def capacity_bytes(directory: str) -> int:
        asked.append(directory)
        if capacity[0] < 0:
            raise OSError(5, "Input/output error")
        return capacity[0]

    monkeypatch.setattr(fs, "capacity_bytes", capacity_bytes)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert store(fs, clock, max_size=1000).evictor.max_size == 100
        assert store(fs, clock, max_size=100).evictor.max_size == 100  # at the disk's size: no warning
        capacity[0] = 0  # a capacity of 0 is unknown, not an empty disk: the cap stays
        assert store(fs, clock, max_size=1000).evictor.max_size == 1000
        capacity[0] = 1  # the smallest known disk
        assert store(fs, clock, max_size=1000).evictor.max_size == 1
        capacity[0] = -1  # the probe fails: the cap stays as configured
        assert store(fs, clock, max_size=1).evictor.max_size == 1
        assert store(fs, clock).evictor.max_size == 0  # no cap: no probe, no line
    assert asked == [DIR] * 5
    assert [m for m in caplog.messages if "another live store" not in m] == [  # the stores above live on
        f"file store: max_size 1000 is above the 100 bytes of the filesystem holding {DIR!r}: clamped to 100"
        " (the disk is the real limit)",
        f"file store: max_size 1000 is above the 1 bytes of the filesystem holding {DIR!r}: clamped to 1"
        " (the disk is the real limit)",
        f"file store: cannot probe the size of {DIR!r}: [Errno 5] Input/output error",
    ]


# -- B2: one log line per failed I/O operation, one per refusal ---------------------------------


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=name, marks=pytest.mark.clauses(*case.clauses)) for name, case in SAID.items()],
)
def test_each_failure_and_refusal_answers_and_logs_exactly_its_lines(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture, case: Said
) -> None:
    case.before(fs)
    s = store(fs, clock, **case.config)
    case.given(fs, s)
    assert case.act(s) == case.answer
    said = warnings_said(caplog)
    assert len(said) == len(case.lines), said
    for line, pattern in zip(said, case.lines, strict=True):
        assert re.fullmatch(pattern, line), line
    s.check_invariants()


@pytest.mark.clauses("F3", "B2")
def test_a_temp_file_that_cannot_be_removed_after_a_failed_write_is_named_too(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    temps: list[str] = []
    fs.fail("write", errno.EIO)

    def remember_and_pin(op: str, path: str) -> None:
        if op == "write":
            temps.append(path)
            fs.fail_unlink(path)

    fs.before = remember_and_pin
    assert s.set("k", b"value") is False
    said = warnings_said(caplog)
    assert len(said) == 2, said
    assert re.fullmatch(rf"file store: cannot write {_K}: \[Errno 5\] EIO: '/cache/\.\w+\.tmp'", said[0])
    assert said[1] == f"file store: cannot remove temp file {temps[-1]!r}: [Errno 1] EPERM: {temps[-1]!r}"


# -- B1: every refused argument names the parameter and what was passed ------------------------


@pytest.mark.clauses("F4", "B1")
@pytest.mark.parametrize(
    ("buffer", "error", "message"),
    [
        (12, TypeError, "buffer must be a writable bytes-like object, got int"),
        (b"abc", TypeError, "buffer must be writable, got a read-only bytes"),
        (
            memoryview(bytearray(8))[::2],
            ValueError,
            "buffer must be contiguous, got a non-contiguous memoryview",
        ),
    ],
    ids=["not-a-buffer", "read-only", "strided"],
)
def test_a_bad_buffer_is_refused_with_its_type_named(
    fs: FakeFileSystem, clock: FakeClock, buffer: object, error: type[Exception], message: str
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"abcd")
    with pytest.raises(error) as caught:
        s.get_into("k", buffer)
    assert str(caught.value) == message


@pytest.mark.clauses("F4")
@pytest.mark.parametrize(
    "make",
    [
        lambda: array.array("I", [0, 0]),
        lambda: memoryview(bytearray(8)).cast("B", (2, 4)),
        lambda: memoryview(bytearray(8)).cast("b"),
    ],
    ids=["uint32-array", "two-dimensional", "signed-bytes"],
)
def test_get_into_fills_a_buffer_of_any_item_format_or_shape_by_its_bytes(
    fs: FakeFileSystem, clock: FakeClock, make: Any
) -> None:
    """A buffer is its bytes: an array of 2 uint32, a 2x4 view and a signed-byte view all take 8 bytes."""
    s = store(fs, clock)
    assert s.set("k", b"ABCDEFGH")
    buffer = make()
    assert s.get_into("k", buffer)
    assert memoryview(buffer).tobytes() == b"ABCDEFGH"
    assert not s.get_into("k", array.array("I", [0])), "4 bytes of buffer for an 8-byte file"


@pytest.mark.clauses("F1", "F9", "B1")
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"storage_dir": ""}, ValueError, "storage_dir must be a non-empty str path without NUL, got ''"),
        (
            {"storage_dir": "/a\0b"},
            ValueError,
            "storage_dir must be a non-empty str path without NUL, got '/a\\x00b'",
        ),
        ({"storage_dir": 5}, TypeError, "storage_dir must be a str path or None, got int 5"),
        ({"namespace": 5}, TypeError, "namespace must be a str, got int 5"),
        ({"namespace": "_a/b"}, ValueError, "namespace must not contain a path separator or NUL, got '_a/b'"),
        (
            {"namespace": "r0"},
            ValueError,
            "namespace must be empty or start with '_' (it ends the key in file names), got 'r0'",
        ),
        ({"clock": 3.0}, TypeError, "clock must be callable or None, got float 3.0"),
        (
            {"namespace": "_\ud800"},
            ValueError,
            "namespace cannot be encoded as part of a file name, got '_\\ud800'",
        ),
    ],
    ids=[
        "empty-dir",
        "nul-dir",
        "int-dir",
        "int-namespace",
        "slash-namespace",
        "unmarked-namespace",
        "clock",
        "surrogate",
    ],
)
def test_a_bad_constructor_argument_is_named_with_what_was_passed(
    fs: FakeFileSystem, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    args: dict[str, Any] = {"storage_dir": DIR, "fs": fs, **kwargs}
    with pytest.raises(error) as caught:
        HiCacheFile(**args)
    assert str(caught.value) == message
    assert fs.calls.total() == 0, "refused before any I/O"


@pytest.mark.clauses("F2", "F5", "B1")
def test_a_bad_value_and_mismatched_batches_are_named(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    with pytest.raises(TypeError) as caught:
        s.set("k", "text")  # type: ignore[arg-type]
    assert str(caught.value) == "value must be bytes, bytearray or memoryview, got str 'text'"
    with pytest.raises(ValueError) as mismatch:
        s.batch_set(["a", "b"], [b"1"])
    assert str(mismatch.value) == "values must have one value per key: 2 keys, 1 values"
    assert fs.listing(DIR) == {}


@pytest.mark.clauses("C6", "B2")
def test_a_second_live_store_on_a_namespace_is_warned_about_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    first = store(fs, clock)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        second = store(fs, clock)
    assert caplog.messages == [
        "file store: another live store holds namespace '_m' of '/cache'"
        " (lock file '/cache/.hicache_m.lock'): each store enforces max_size on its own writes only,"
        " so this namespace can hold up to that many times the cap; give each process its own namespace"
    ]
    assert first is not second


@pytest.mark.clauses("C6")
@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize(
    "config",
    [
        {},
        {"enable_metadata_cache": True},
        {"enable_metadata_cache": True, "startup_scan": "background"},
        {"layout": "fanout", "max_size": 1 << 20},
    ],
    ids=["plain", "metadata cache", "background scan", "fanout with a cap"],
)
def test_a_dropped_store_lets_its_namespace_go_at_once_with_no_collection(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture, config: dict[str, Any]
) -> None:
    # With the store in a cycle, the second store would be warned about a store that no one holds.
    first = store(fs, clock, **config)
    first.wait_started()
    assert first.set("k", b"v")
    gone = weakref.ref(first)
    del first
    assert gone() is None, "the store outlived its last reference"
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        second = store(fs, clock, **config)
        second.wait_started()
    assert caplog.messages == []
    assert second.exists("k")


@pytest.mark.clauses("C6")
@pytest.mark.usefixtures("collector_off")
def test_an_evictor_kept_beyond_its_store_still_reads_and_says_why_it_cannot_act(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    first = store(fs, clock)
    assert first.set("k", b"v")
    evictor = first.evictor
    del first
    assert evictor.total == 1 and [entry.key for entry in evictor.snapshot()] == ["k"]
    with pytest.raises(ReferenceError, match=r"^the file store this evictor served is gone$"):
        evictor.touch("untracked")  # adopting a file needs the store's name for it


# -- S2: private files -------------------------------------------------------------------------------


@pytest.mark.clauses("S2")
def test_pages_and_temp_files_are_created_0600_or_0660_with_a_shared_group(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, umask=0)
    private = store(fs, clock)
    assert private.set("k", b"v")
    assert fs.files[path("k")].mode == 0o600
    shared = HiCacheFile("/shared", namespace=NS, extra_config={"shared_group": 0}, fs=fs, clock=clock)
    assert shared.set("k", b"v")
    assert fs.files[f"/shared/k{NS}.bin"].mode == 0o660
    assert all(f.mode in (0o600, 0o660) for f in fs.files.values())


# -- S6: only our own temporaries --------------------------------------------------------------------


@pytest.mark.clauses("S6", "S2", "F3")
def test_a_taken_temp_name_is_never_unlinked_another_name_is_picked(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(fs, clock)
    names = iter(["000000000001", "000000000001", "000000000002"])
    monkeypatch.setattr("hicache.file_store.secrets.token_hex", lambda n: next(names))
    fs.put(f"{DIR}/.000000000001.tmp", b"a live writer's")
    assert s.set("k", b"mine")
    assert fs.listing(DIR)[".000000000001.tmp"].data == b"a live writer's"
    assert fs.listing(DIR)[f"k{NS}.bin"].data == b"mine"
    assert fs.calls["unlink"] == 0


@pytest.mark.clauses("S6", "B2")
def test_when_every_temp_name_tried_is_taken_the_write_is_refused_and_nothing_is_unlinked(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(fs, clock, max_size=100)
    monkeypatch.setattr("hicache.file_store.secrets.token_hex", lambda n: "000000000001")
    fs.plant(f"{DIR}/.000000000001.tmp", "symlink")
    assert s.set("k", b"mine") is False
    assert fs.calls["unlink"] == 0 and fs.others(DIR) == {".000000000001.tmp": ("symlink", 1000)}
    assert s.evictor.total == 0


# -- S4: bounded reads -------------------------------------------------------------------------------


@pytest.mark.clauses("S4", "F9", "B1")
def test_max_value_size_follows_the_configuration_rules_and_defaults_to_the_cap_then_16_gib() -> None:
    assert load_file_config({}, environ={}).effective_max_value_size == 16 * 1024**3
    assert load_file_config({"max_size": "1G"}, environ={}).effective_max_value_size == 10**9
    both = load_file_config({"max_size": "1G", "max_value_size": "1Mi"}, environ={})
    assert both.effective_max_value_size == 1024**2
    env = {"HICACHE_FILE_MAX_VALUE_SIZE": "2K", "SGLANG_HICACHE_FILE_BACKEND_MAX_VALUE_SIZE": "2K"}
    assert load_file_config({}, environ=env).max_value_size == 2000
    assert load_file_config({"max_value_size": 7}, environ=env).max_value_size == 7
    with pytest.raises(
        ValueError, match=r"^max_value_size \(from HICACHE_FILE_MAX_VALUE_SIZE\) must be a size"
    ):
        load_file_config({}, environ={"HICACHE_FILE_MAX_VALUE_SIZE": "lots"})
    with pytest.raises(ValueError, match=r"^extra_config\['max_value_size'\] must be >= 0"):
        load_file_config({"max_value_size": -1}, environ={})


# -- S7: costs stay proportional ---------------------------------------------------------------------


@pytest.mark.clauses("S7", "V3")
@pytest.mark.parametrize("entries", [100, 10_000])
def test_a_set_at_the_cap_visits_only_its_victims_and_the_entries_it_skips(
    fs: FakeFileSystem, clock: FakeClock, entries: int
) -> None:
    s = store(fs, clock, max_size=entries, eviction_ratio=1.0)
    for i in range(entries):
        s.evictor.touch(f"k{i}", 1)  # tracked one-byte pages (their files are not needed to evict them)
    s.evictor._entries = _CountingOrder(s.evictor._entries)
    assert s.evictor.reserve("held", 0)  # a write in flight, most recent
    s.evictor._entries.move_to_end("k0", last=False)
    _CountingOrder.visited = 0
    assert s.set("new", b"y")
    assert _CountingOrder.visited <= 2  # one victim, and the walk stops
    assert len(s.evictor) == entries + 1 and "k0" not in s.evictor


@pytest.mark.clauses("S7", "V5", "B2")
def test_an_unremovable_file_is_retried_and_logged_once_per_back_off_not_on_every_write(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, max_size=4, eviction_ratio=1.0, enable_metadata_cache=True)
    for key in ("a", "b", "c", "d"):
        assert s.set(key, b"x")
    for key in ("a", "b", "c", "d"):
        fs.fail_unlink(path(key))  # every page is stuck: each refused write would try them all
    with caplog.at_level(logging.WARNING, logger="hicache.file_evictor"):
        unlinks = fs.calls["unlink"]
        assert not s.set("e", b"y")  # tries the four once, and each starts its back-off
        assert fs.calls["unlink"] - unlinks == 4 and len(_evictor_lines(caplog)) == 4
        for i in range(200):
            assert not s.set(f"f{i}", b"y")  # resting: no unlink, no log line
        assert fs.calls["unlink"] - unlinks == 4 and len(_evictor_lines(caplog)) == 4
        assert RETRY_UNREMOVABLE_AFTER == 30.0
        clock.advance(29.5)  # before the back-off ends
        assert not s.set("g", b"y")
        assert fs.calls["unlink"] - unlinks == 4
        fs.allow_unlink(path("a"))  # healed meanwhile, by hand
        clock.advance(0.5)  # the exact instant the back-off ends: "a" is retried and goes
        assert s.set("g", b"y")
        assert fs.calls["unlink"] - unlinks == 5 and len(_evictor_lines(caplog)) == 4
        assert not s.exists("a") and [e.key for e in s.evictor.snapshot()] == ["b", "c", "d", "g"]
        clock.advance(30.0)
        assert s.set("h", b"y")  # b, c, d retried and logged again (once each), then "g" goes
        assert fs.calls["unlink"] - unlinks == 9 and len(_evictor_lines(caplog)) == 7
    assert "cannot remove 'a', skipping it for 30 s" in _evictor_lines(caplog)[0]
    s.check_invariants()


@pytest.mark.clauses("S7", "V4")
def test_a_back_off_belongs_to_the_entry_a_new_write_of_the_key_is_evictable_at_once(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, max_size=2, eviction_ratio=1.0)
    assert s.set("a", b"x") and s.set("b", b"x")
    fs.fail_unlink(path("a"))
    assert s.set("c", b"x")  # "a" stuck (now resting), "b" evicted
    fs.allow_unlink(path("a"))
    assert s.delete("a") and s.set("a", b"z")  # a new file and a new entry: no rest inherited
    assert s.set("d", b"x")  # "c" goes (oldest); then
    assert s.set("e", b"x")  # "a" goes at once, no back-off to wait for
    assert "a" not in s.evictor and not s.exists("a")


# -- S8: the disk is the limit -----------------------------------------------------------------------


@pytest.mark.clauses("S8", "V3", "F3")
def test_a_full_disk_below_the_cap_evicts_old_pages_and_retries_the_write_once(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs = FakeFileSystem(clock, disk_size=10)
    s = store(fs, clock, max_size=1 << 20, eviction_ratio=1.0, enable_metadata_cache=True)
    assert s.evictor.max_size == 10  # clamped (S8), and yet:
    fs.put(f"{DIR}/someone-else.dat", b"o" * 4)  # another program fills the disk: the cap is never reached
    for key in ("a", "b", "c"):
        assert s.set(key, b"xx")
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        writes = fs.calls["write"]
        assert s.set("d", b"yyy")  # ENOSPC, evict "a" and "b" (3 bytes at least), one retry
    assert fs.calls["write"] - writes == 2
    assert fs.listing(DIR).keys() == {"someone-else.dat", "c_m.bin", "d_m.bin"}
    assert s.get("d") == b"yyy" and not s.exists("a") and "b" not in believed(s)
    assert "cannot write '/cache/d_m.bin': [Errno 28]" in caplog.text
    assert "retrying 'd'" in caplog.text
    s.check_invariants()


@pytest.mark.clauses("S8", "F3", "B2")
def test_enospc_is_retried_once_only_and_only_when_eviction_freed_something(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, disk_size=1 << 20)
    s = store(fs, clock, max_size=100, eviction_ratio=1.0)
    assert s.set("a", b"xx")
    fs.fail("write", errno.ENOSPC, times=2)
    writes = fs.calls["write"]
    assert not s.set("b", b"y")  # ENOSPC, "a" evicted, retried once, ENOSPC again: False
    assert fs.calls["write"] - writes == 2 and fs.pending_faults("write") == 0
    assert fs.listing(DIR) == {} and len(s.evictor) == 0  # nothing left behind, reservation released
    fs.fail("write", errno.ENOSPC)
    writes = fs.calls["write"]
    assert not s.set("c", b"y")  # nothing to evict: no retry
    assert fs.calls["write"] - writes == 1
    fs.fail("write", errno.EIO)
    assert s.set("d", b"y") is False and fs.calls["write"] - writes == 2  # EIO is no pressure: no retry
    s.check_invariants()


@pytest.mark.clauses("S8", "V1")
def test_enospc_evicts_nothing_when_eviction_is_off(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, disk_size=4)
    s = store(fs, clock)
    assert s.set("a", b"xxxx")
    assert not s.set("b", b"y")  # the disk is full, but no cap and no floor: no page is ever evicted
    assert s.get("a") == b"xxxx"


@pytest.mark.clauses("S8", "V3")
def test_a_cap_above_the_disk_is_clamped_to_it_with_a_warning(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs = FakeFileSystem(clock, disk_size=100)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        s = store(fs, clock, max_size=1000)
    assert s.evictor.max_size == 100
    assert "max_size 1000 is above the 100 bytes of the filesystem" in caplog.text
    assert store(fs, clock, max_size=60).evictor.max_size == 60  # below the disk: as configured
    assert store(fs, clock).evictor.max_size == 0  # no cap: nothing to clamp


# -- C6: one store per namespace ---------------------------------------------------------------------


@pytest.mark.clauses("C6")
def test_a_second_live_store_on_a_namespace_is_warned_about_and_a_gone_one_is_not(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        first = store(fs, clock)
        assert "another live store" not in caplog.text
        second = store(fs, clock)
        assert "another live store holds namespace '_m' of '/cache'" in caplog.text
        assert "lock file '/cache/.hicache_m.lock'" in caplog.text
        caplog.clear()
        HiCacheFile(DIR, namespace="_other", fs=fs, clock=clock)  # another namespace: its own lock
        assert "another live store" not in caplog.text
        # Both gone with their last references, no collection needed (test_file_store_namespace_lock.py):
        # the lock is free.
        del first, second
        store(fs, clock)
        assert "another live store" not in caplog.text


@pytest.mark.clauses("B1", "F5")
def test_batch_keys_and_values_that_are_not_iterable_are_named_word_for_word(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s: Any = store(fs, clock)
    before = calls(fs)
    for call, args in ((s.batch_get, (5,)), (s.batch_exists, (5,)), (s.batch_set, (5, []))):
        with pytest.raises(TypeError) as refused:
            call(*args)
        assert str(refused.value) == "keys must be an iterable, got int 5"
    with pytest.raises(TypeError) as refused:
        s.batch_set(["a"], None)
    assert str(refused.value) == "values must be an iterable, got NoneType None"
    assert calls(fs) == before  # before any I/O


@pytest.mark.clauses("F7", "F8-bg", "C3")
def test_a_page_another_process_removes_while_clear_removes_it_is_not_adopted_by_the_scan(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    class Racing:
        """The other process removes k4 just before this store's unlink of it (which then finds it gone)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(fs, name)

        def unlink(self, where: str) -> None:
            if where == path("k4"):
                fs.remove(where)
            fs.unlink(where)

    class Stepped(HiCacheFile):
        _scan_thread = False
        _scan_batch = 3

    fs.mkdir(DIR)
    for i in range(6):
        fs.put(path(f"k{i}"), b"xx", mtime=float(i))
    racing: Any = Racing()
    s = Stepped(DIR, namespace=NS, extra_config={"startup_scan": "background"}, fs=racing, clock=clock)
    assert s._scan_step() and order(s) == ["k0", "k1", "k2"]
    assert s.clear() and fs.listing(DIR) == {}
    while s._scan_step():  # the listing, older than the clear, still names k3, k4 and k5
        pass
    assert order(s) == [] and s.evictor.total == 0
    s.check_invariants()


@pytest.mark.clauses("B1", "F10")
def test_a_naming_that_is_not_an_engine_naming_is_named_word_for_word(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    naming: Any = "engine"
    with pytest.raises(TypeError) as refused:
        HiCacheFile(DIR, naming=naming, fs=fs, clock=clock)
    assert str(refused.value) == "naming must be an EngineNaming or None, got str"
    assert sum(fs.calls.values()) == 0  # before any I/O
