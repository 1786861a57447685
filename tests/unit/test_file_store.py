"""Deterministic unit tests of HiCacheFile on the fake filesystem and clock (F1-F8, C2, C4, B1, B2)."""

from __future__ import annotations

import array
import contextlib
import errno
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hicache import HiCacheFile
from hicache.file_startup import _oldest_first
from hicache.file_store import escape_key
from spec.machines.file_store import believed
from spec.models.file_names import pages
from spec.world.clock import FakeClock
from spec.world.filesystem import Crash, FakeFileSystem

DIR = "/cache"
NS = "_m_r0"


def store(fs: FakeFileSystem, clock: FakeClock, namespace: str = NS, **config: Any) -> HiCacheFile:
    return HiCacheFile(DIR, namespace=namespace, extra_config=config, fs=fs, clock=clock)


def calls(fs: FakeFileSystem) -> int:
    return sum(fs.calls.values())


# -- F1: naming and namespaces ---------------------------------------------------


@pytest.mark.clauses("F1")
def test_each_key_is_one_file_named_key_namespace_bin(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    assert s.set("page-1", b"abc")
    assert set(fs.listing(DIR)) == {"page-1_m_r0.bin"}
    assert s.file_name("page-1") == "page-1_m_r0.bin"


@pytest.mark.clauses("F1", "F7", "F8")
def test_a_store_never_sees_counts_or_clears_another_namespace(fs: FakeFileSystem, clock: FakeClock) -> None:
    mine, other = store(fs, clock, "_r0"), store(fs, clock, "_r1")
    assert mine.set("k", b"mine") and other.set("k", b"other!")
    assert mine.get("k") == b"mine" and other.get("k") == b"other!"
    restarted = store(fs, clock, "_r0")
    assert restarted.evictor.total == 4
    assert restarted.clear()
    assert set(fs.listing(DIR)) == {"k_r1.bin"}
    assert other.get("k") == b"other!"


# -- F2: keys and values ------------------------------------------------------------


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize(
    "key",
    ["", "a/b", "../escape", "..", ".hidden", "nul\0byte", "x" * 250, "é" * 124],
    ids=["empty", "slash", "dotdot-slash", "dotdot", "leading-dot", "nul", "too-long", "too-long-utf8"],
)
def test_bad_keys_are_value_errors_before_any_io(fs: FakeFileSystem, clock: FakeClock, key: str) -> None:
    s = store(fs, clock)
    before = calls(fs)
    for op in (s.exists, s.get, s.delete, lambda k: s.set(k, b"v"), lambda k: s.get_into(k, bytearray(1))):
        with pytest.raises(ValueError, match="key"):
            op(key)
    with pytest.raises(ValueError, match="key"):
        s.batch_exists(["fine", key])
    with pytest.raises(ValueError, match="key"):
        s.batch_set(["fine", key], [b"1", b"2"])
    assert calls(fs) == before
    assert fs.listing(DIR) == {}


@pytest.mark.clauses("F2")
def test_the_longest_key_that_fits_the_name_limit_is_accepted(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    key = "x" * (255 - len(NS + ".bin"))
    assert s.set(key, b"v") and s.get(key) == b"v"
    with pytest.raises(ValueError, match="255"):
        s.set(key + "x", b"v")


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize("key", [None, 3, b"bytes-key", ("t",)])
def test_keys_that_are_not_str_are_type_errors(fs: FakeFileSystem, clock: FakeClock, key: object) -> None:
    s = store(fs, clock)
    with pytest.raises(TypeError, match="key"):
        s.exists(key)  # type: ignore[arg-type]


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
    assert set(fs.listing(DIR)) == {"k_m_r0.bin"}


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
    assert set(fs.listing(DIR)) == {"a_m_r0.bin"}, "the temp file was removed"
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


@pytest.mark.clauses("F4")
def test_get_of_a_vanished_file_is_none_and_gives_its_bytes_back(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    assert s.set("k", b"12345")
    fs.remove(f"{DIR}/k{NS}.bin")  # another process
    assert s.exists("k"), "the belief stands until the store finds the file missing (C2)"
    assert s.get("k") is None
    assert s.evictor.total == 0 and "k" not in believed(s) and not s.exists("k")


@pytest.mark.clauses("F4", "F6")
def test_get_hit_refreshes_recency_and_teaches_the_belief(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.mkdir(DIR)
    fs.put(f"{DIR}/a{NS}.bin", b"1")
    fs.put(f"{DIR}/b{NS}.bin", b"2")
    s = store(fs, clock, enable_metadata_cache=True)
    s.delete("a")
    fs.put(f"{DIR}/a{NS}.bin", b"1")  # back, untracked and unbelieved
    assert s.get("a") == b"1"
    assert "a" in believed(s) and [e.key for e in s.evictor.snapshot()] == ["b", "a"]


@pytest.mark.clauses("F4")
def test_get_into_fills_a_buffer_of_exactly_the_file_size(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    assert s.set("k", b"abcd")
    exact = bytearray(4)
    assert s.get_into("k", exact) and exact == b"abcd"
    view = memoryview(bytearray(8))[2:6]
    assert s.get_into("k", view) and bytes(view) == b"abcd"
    for size in (3, 5):
        wrong = bytearray(b"\xee" * size)
        assert not s.get_into("k", wrong)
        assert wrong == b"\xee" * size, "a page of another layout is never copied in"
    assert not s.get_into("missing", bytearray(4))


@pytest.mark.clauses("F4", "B1")
@pytest.mark.parametrize("buffer", [b"read-only", "text", 3, memoryview(bytearray(8))[::2]])
def test_get_into_rejects_a_buffer_it_cannot_fill(
    fs: FakeFileSystem, clock: FakeClock, buffer: object
) -> None:
    s = store(fs, clock)
    with pytest.raises((TypeError, ValueError), match="buffer"):
        s.get_into("k", buffer)


@pytest.mark.clauses("F4", "B2")
def test_short_reads_and_io_errors_are_misses_with_a_log_line(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"abcdef")
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        fs.short_reads(2)
        assert s.get("k") is None
        assert not s.get_into("k", bytearray(6))
        fs.fail("read", errno.EIO, times=2)
        assert s.get("k") is None
        assert not s.get_into("k", bytearray(6))
    assert caplog.text.count("short read") == 2 and caplog.text.count("cannot read") == 2
    assert s.get("k") == b"abcdef" and s.evictor.total == 6, "the file and its accounting stay"


# -- F5: batches --------------------------------------------------------------


@pytest.mark.clauses("F5")
def test_batch_exists_answers_the_longest_existing_prefix_without_listing(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock)
    for i in range(50):
        fs.put(f"{DIR}/other{i}{NS}.bin", b"x")
    assert s.batch_set(["a", "b", "d"], [b"1", b"2", b"4"]) == [True, True, True]
    scans = fs.calls["scandir"]
    assert s.batch_exists(["a", "b", "c", "d"]) == 2
    assert s.batch_exists(["a", "b", "d"]) == 3
    assert s.batch_exists([]) == 0
    assert s.batch_exists(iter(["a", "zz"])) == 1
    assert fs.calls["scandir"] == scans
    assert s.batch_get(["a", "c", "d"]) == [b"1", None, b"4"]


@pytest.mark.clauses("F5", "B1")
def test_batch_set_needs_one_value_per_key(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    with pytest.raises(ValueError, match="one value per key"):
        s.batch_set(["a", "b"], [b"1"])
    assert fs.calls["write"] == 0


# -- F6: exists ---------------------------------------------------------------


@pytest.mark.clauses("F6")
def test_a_believed_key_is_answered_with_no_filesystem_call(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock, enable_metadata_cache=True)
    assert s.set("k", b"v")
    before = calls(fs)
    assert all(s.exists("k") for _ in range(100))
    assert calls(fs) == before


@pytest.mark.clauses("F6")
def test_an_unbelieved_key_costs_one_stat_and_a_hit_teaches_the_belief(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    s = store(fs, clock, enable_metadata_cache=True)
    fs.put(f"{DIR}/k{NS}.bin", b"v")
    before = calls(fs)
    assert s.exists("k") and calls(fs) == before + 1 and fs.calls["stat"] == 1
    assert s.exists("k") and calls(fs) == before + 1
    assert not s.exists("nope") and calls(fs) == before + 2


@pytest.mark.clauses("F6")
def test_without_the_metadata_cache_every_exists_is_one_stat(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    assert s.set("k", b"v")
    before = fs.calls["stat"]
    for _ in range(3):
        assert s.exists("k")
    assert fs.calls["stat"] == before + 3


@pytest.mark.clauses("F6", "B2")
def test_a_failing_stat_answers_false_with_a_log_line(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"v")
    fs.fail("stat", errno.EIO)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert not s.exists("k")
    assert "cannot stat" in caplog.text
    assert s.exists("k")


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


@pytest.mark.clauses("F8")
def test_start_up_creates_the_directory_and_accepts_an_existing_one(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    first = HiCacheFile("/deep/nested/dir", fs=fs, clock=clock)
    second = HiCacheFile("/deep/nested/dir", fs=fs, clock=clock)  # created already: fine
    assert first.set("k", b"v") and second.get("k") == b"v"


@pytest.mark.clauses("F8", "C4")
def test_start_up_removes_only_temp_files_older_than_the_threshold(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    fs.put(f"{DIR}/.00000000000a.tmp", b"x", mtime=clock() - 3601)
    fs.put(f"{DIR}/.00000000000b.tmp", b"x", mtime=clock() - 3600)
    fs.put(f"{DIR}/.00000000000c.tmp", b"x", mtime=clock() - 10)
    store(fs, clock)
    assert set(fs.listing(DIR)) == {".00000000000b.tmp", ".00000000000c.tmp"}
    store(fs, clock, temp_max_age=5)
    assert fs.listing(DIR) == {}


@pytest.mark.clauses("F8", "C3")
def test_start_up_seeds_accounting_oldest_first_and_beliefs(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.mkdir(DIR)
    fs.put(f"{DIR}/new{NS}.bin", b"333", mtime=30)
    fs.put(f"{DIR}/old{NS}.bin", b"1", mtime=10)
    fs.put(f"{DIR}/mid{NS}.bin", b"22", mtime=20)
    fs.put(f"{DIR}/theirs_x.bin", b"4444", mtime=5)
    s = store(fs, clock, enable_metadata_cache=True)
    assert [e.key for e in s.evictor.snapshot()] == ["old", "mid", "new"]
    assert s.evictor.total == 6
    assert all(k in believed(s) for k in ("old", "mid", "new")) and "theirs_x" not in believed(s)
    assert fs.calls["scandir"] == 1 and fs.calls["stat"] == 0, "one pass over the directory"


@pytest.mark.clauses("F8")
@pytest.mark.parametrize(
    "keys",
    [
        ["b", "c", "a"],  # plain keys of one length: their order is their names' (the listing's)
        ["ab", "ab-", "ab.c", "b"],  # "ab" is a prefix of "ab-", whose name sorts first ("-" < ".")
        ["a0", "a_", "a%"],  # escaped, of one length: "a%25" and "a%5F" sort before "a0"
    ],
)
def test_start_up_orders_pages_of_one_time_in_the_listings_order_not_by_key(
    fs: FakeFileSystem, clock: FakeClock, keys: list[str]
) -> None:
    # The fake filesystem lists a directory by file name: the listing's order is the names' (F8).
    fs.mkdir(DIR)
    files = {}
    for i, key in enumerate(keys):
        name = escape_key(key) + NS + ".bin"
        fs.put(f"{DIR}/{name}", b"x" * (i + 1), mtime=7.0)
        files[name] = (b"x" * (i + 1), 7.0)
    fs.put(f"{DIR}/z{NS}.bin", b"old", mtime=1.0)  # older than all of them: first whatever its name
    files[f"z{NS}.bin"] = (b"old", 1.0)
    s = store(fs, clock)
    assert [e.key for e in s.evictor.snapshot()] == [k for _m, _n, k, _size in pages(files, NS)]
    assert next(e.key for e in s.evictor.snapshot()) == "z"


@pytest.mark.clauses("F8")
@settings(max_examples=300, deadline=None)
@given(mtimes=st.lists(st.sampled_from([1.0, 2.0, 3.0]) | st.floats(0, 100, allow_nan=False), max_size=12))
def test_the_start_up_order_is_oldest_time_first_ties_in_the_listings_order(mtimes: list[float]) -> None:
    listed = array.array("d", mtimes)
    order = _oldest_first(listed)
    assert sorted(order) == list(range(len(mtimes)))
    assert [(mtimes[i], i) for i in order] == sorted((m, i) for i, m in enumerate(mtimes))


@pytest.mark.clauses("F8", "V3")
def test_start_up_over_the_cap_evicts_at_once(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.mkdir(DIR)
    for i in range(10):
        fs.put(f"{DIR}/k{i}{NS}.bin", b"x" * 10, mtime=i)
    s = store(fs, clock, max_size=50, eviction_ratio=0.5, enable_metadata_cache=True)
    assert [e.key for e in s.evictor.snapshot()] == ["k8", "k9"]
    assert "k0" not in believed(s) and not s.exists("k0")
    assert len(fs.listing(DIR)) == 2


@pytest.mark.clauses("F9", "F8")
def test_storage_dir_none_means_the_configured_directory(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = HiCacheFile(extra_config={"storage_dir": "/configured"}, fs=fs, clock=clock)
    assert s.directory == "/configured" and s.set("k", b"v")
    assert set(fs.listing("/configured")) == {"k.bin"}


# -- C2: others' deletions ----------------------------------------------------------


@pytest.mark.clauses("C2", "M2")
def test_a_file_deleted_by_another_process_is_believed_at_most_ttl_after_the_birth(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=5)
    assert s.set("k", b"v")
    fs.remove(f"{DIR}/k{NS}.bin")
    clock.advance(5)
    assert s.exists("k"), "still within the belief's lifetime (inclusive boundary)"
    clock.advance(0.125)
    assert not s.exists("k")


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


@pytest.mark.clauses("F1")
def test_the_default_namespace_leaves_other_namespaces_files_alone(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    ranked = store(fs, clock, "_r1")
    assert ranked.set("k", b"rank one")
    default = store(fs, clock, "")
    assert default.evictor.total == 0 and not default.exists("k")
    assert default.set("k", b"default") and default.clear()
    assert ranked.get("k") == b"rank one"
    assert set(fs.listing(DIR)) == {"k_r1.bin"}


@pytest.mark.clauses("F1")
def test_a_namespace_ending_like_another_never_shares_a_file_with_it(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    outer, inner = store(fs, clock, "_a"), store(fs, clock, "_b_a")
    assert outer.set("x_b", b"outer") and inner.set("x", b"inner")
    assert outer.get("x_b") == b"outer" and inner.get("x") == b"inner"
    assert set(fs.listing(DIR)) == {"x%5Fb_a.bin", "x_b_a.bin"}
    assert store(fs, clock, "_a").evictor.snapshot() == (("x_b", 5, False),)


@pytest.mark.clauses("F1", "F2", "F8")
@pytest.mark.parametrize("key", ["a_b", "100%", "%5F", "_lead", "a__b%25"])
def test_keys_with_the_namespace_mark_or_a_percent_round_trip_through_file_names(
    fs: FakeFileSystem, clock: FakeClock, key: str
) -> None:
    assert store(fs, clock).set(key, b"v")
    again = store(fs, clock)
    assert [e.key for e in again.evictor.snapshot()] == [key]
    assert again.get(key) == b"v"


@pytest.mark.clauses("F1", "B1")
def test_a_namespace_must_start_with_the_mark(fs: FakeFileSystem, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="namespace"):
        store(fs, clock, "r0")


@pytest.mark.clauses("F1", "F8")
def test_files_this_store_would_never_write_are_not_taken_for_keys(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    for name in ("a%41_ns.bin", "%_ns.bin", "_ns.bin", ".x_ns.bin", "a_ns.tmp", "a_ns.bin"):
        fs.put(f"{DIR}/{name}", b"1")
    assert [e.key for e in store(fs, clock, "_ns").evictor.snapshot()] == ["a"]


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
