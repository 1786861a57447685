"""What each file store operation costs in filesystem calls, and the edges of its bookkeeping (F4, F6-F8, C3).

The store runs on shared filesystems where each call is a network round trip, so docs/SEMANTICS.md F6 promises
few of them: a believed key costs none, a read that finds a file already knows its size (no extra ``stat``),
a clear that keeps an unremovable file knows its size from the listing.  Counting calls on the fake
filesystem makes those promises testable (and kills the mutants that would add a call, ``make mutation``).
"""

from __future__ import annotations

import array
import errno
import re
from typing import Any

import pytest

from hicache import HiCacheFile
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, calls_during, store


@pytest.mark.clauses("F4", "F6", "C3")
@pytest.mark.parametrize("read", ["get", "get_into"])
def test_reading_a_file_another_process_wrote_adopts_it_with_the_size_read_and_no_stat(
    fs: FakeFileSystem, clock: FakeClock, read: str
) -> None:
    s = store(fs, clock, enable_metadata_cache=True)
    fs.put(f"{DIR}/k{NS}.bin", b"abcdef")  # after start-up: unknown to the store
    assert "k" not in s.evictor
    action = (lambda: s.get("k")) if read == "get" else (lambda: s.get_into("k", bytearray(6)))
    answer, spent = calls_during(fs, action)
    assert answer
    assert spent == {"read": 1}, "the read told the size: no stat"
    assert "k" in s.evictor and s.evictor.total == 6 and "k" in believed(s)
    s.check_invariants()


@pytest.mark.clauses("F4", "C2", "C3")
def test_get_into_of_a_vanished_file_is_false_and_gives_its_bytes_back(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    assert s.set("k", b"12345") and s.set("j", b"12")
    fs.remove(f"{DIR}/k{NS}.bin")  # another process
    assert s.exists("k"), "the belief stands until the store finds the file missing (C2)"
    assert s.get_into("k", bytearray(5)) is False
    assert s.evictor.total == 2 and "k" not in s.evictor and "k" not in believed(s)
    assert "j" in believed(s) and "j" in s.evictor
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


@pytest.mark.clauses("F5", "F6")
def test_batch_exists_answers_believed_keys_with_no_filesystem_call(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    assert s.batch_set(["a", "b", "c"], [b"1", b"2", b"3"]) == [True, True, True]
    answer, spent = calls_during(fs, lambda: s.batch_exists(["a", "b", "c", "d"]))
    assert answer == 3
    assert spent == {"stat": 1}, "only the unbelieved key d is looked up"


@pytest.mark.clauses("F8", "S6")
def test_start_up_removes_old_temp_files_only_not_files_that_merely_look_half_like_one(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """A temp file is exactly ``.<12 hex digits>.tmp`` (S6).  Another program's ``notes.tmp``,
    ``.profile`` or ``.abc.tmp`` in the same directory is not ours to remove, however old."""
    fs.mkdir(DIR)
    old = clock() - 10 * 3600
    for name in (".0123456789ab.tmp", ".abc.tmp", "notes.tmp", ".profile", ".x.bin", ".0123456789AB.tmp"):
        fs.put(f"{DIR}/{name}", b"x", mtime=old)
    store(fs, clock)
    assert set(fs.listing(DIR)) == {".abc.tmp", "notes.tmp", ".profile", ".x.bin", ".0123456789AB.tmp"}


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


@pytest.mark.clauses("F3", "C2")
def test_a_failed_set_leaves_its_key_unbelieved_even_if_a_probe_taught_it_meanwhile(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """A failed write undoes everything its attempt may have left, the belief included (as the model's
    ``set`` does): here another process wrote the key's file and an ``exists`` taught the belief while our
    write was failing.  Dropping a belief is always safe; the next ``exists`` asks the filesystem."""
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)

    def meanwhile(op: str, path: str) -> None:
        if op == "write":
            fs.before = None
            fs.put(f"{DIR}/k{NS}.bin", b"theirs")
            assert s.exists("k") and "k" in believed(s)
            fs.fail("write", errno.ENOSPC)

    fs.before = meanwhile
    assert s.set("k", b"mine") is False
    assert "k" not in believed(s)
    _, spent = calls_during(fs, lambda: s.exists("k"))
    assert spent == {"stat": 1}
    assert "k" in believed(s)


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize(
    ("unit", "bytes_each"),
    [("_", 3), ("%", 3), ("é", 2), ("€", 3), ("\U0001f600", 4)],
    ids=["underscore-escaped", "percent-escaped", "two-byte", "three-byte", "four-byte"],
)
def test_the_name_limit_counts_the_escaped_encoded_bytes_exactly(
    fs: FakeFileSystem, clock: FakeClock, unit: str, bytes_each: int
) -> None:
    """NAME_MAX is 255 bytes of the file name: escapes ("_" -> "%5F", "%" -> "%25") and UTF-8 widths count.
    The longest key that fits is accepted and one more character is refused, whatever the key is made of."""
    s = store(fs, clock)
    room = 255 - len(f"{NS}.bin")
    fits = unit * (room // bytes_each)
    assert s.set(fits, b"v") and s.get(fits) == b"v"
    too_long = fits + unit
    name_bytes = len(too_long) * bytes_each + len(f"{NS}.bin")
    assert name_bytes > 255
    with pytest.raises(ValueError) as caught:
        s.exists(too_long)
    assert str(caught.value).startswith(f"key makes a file name of {name_bytes} bytes (limit 255)")


@pytest.mark.clauses("F1", "B1")
def test_a_namespace_with_a_nul_is_refused(fs: FakeFileSystem) -> None:
    with pytest.raises(ValueError) as caught:
        HiCacheFile(DIR, namespace="_a\0b", fs=fs)
    assert str(caught.value) == "namespace must not contain a path separator or NUL, got '_a\\x00b'"


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
