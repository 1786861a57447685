"""What the store knows (hicache/file_knowledge.py): beliefs and accounting taught by reads, probes and
batches, and forgotten under the guards of an overlapping removal (F4-F6, C1-C3, S4, B2).

The overlap tests run the removal from the fake filesystem's hook right after the probe's own filesystem
call, so the overlap is exact and needs no threads; they add what the C1 schedule tests cannot see from a
fresh store: a store whose removals counter has already moved, and the recency rules of an overlapped
probe."""

from __future__ import annotations

import errno
import logging
from typing import Any

import pytest

from hicache import HiCacheFile
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, assert_said, calls, calls_during, order, path, store


def believing(fs: FakeFileSystem, clock: FakeClock) -> HiCacheFile:
    return store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)


def once_after(fs: FakeFileSystem, op: str, key: str, action: Any) -> None:
    """Run ``action`` right after the store's next ``op`` on ``key``'s file (once)."""

    def hook(done_op: str, done_path: str) -> None:
        if done_op == op and done_path == path(key):
            fs.after = None
            action()

    fs.after = hook


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


@pytest.mark.clauses("F5", "F6")
def test_batch_exists_answers_believed_keys_with_no_filesystem_call(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    assert s.batch_set(["a", "b", "c"], [b"1", b"2", b"3"]) == [True, True, True]
    answer, spent = calls_during(fs, lambda: s.batch_exists(["a", "b", "c", "d"]))
    assert answer == 3
    assert spent == {"stat": 1}, "only the unbelieved key d is looked up"


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


@pytest.mark.clauses("F4", "F5", "M9")
def test_a_batch_read_teaches_the_keys_read_before_a_missing_one_and_with_no_stat(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = believing(fs, clock)
    fs.put(path("a"), b"12")  # written by another process: neither tracked nor believed
    fs.put(path("b"), b"345")
    values, spent = calls_during(fs, lambda: s.batch_get(["a", "gone", "b"]))
    assert values == [b"12", None, b"345"]
    assert spent == {"read": 3}  # a read knows the size it adopts: no stat
    assert order(s) == ["a", "b"] and s.evictor.total == 5
    assert believed(s) == {"a", "b"}  # a's lesson was applied before "gone" was forgotten
    s.check_invariants()


@pytest.mark.clauses("C1", "V4", "M9")
def test_a_batch_read_overlapped_by_a_removal_refreshes_a_tracked_key_adopts_no_other_and_teaches_the_next(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = believing(fs, clock)
    assert s.set("a", b"1") and s.set("b", b"2") and s.set("c", b"3")
    fs.put(path("u"), b"4")  # untracked files of another process
    fs.put(path("v"), b"5")

    def delete_c(op: str, done: str) -> None:
        if op == "read" and done == path("u"):
            fs.after = None
            assert s.delete("c")

    fs.after = delete_c  # a removal overlaps the reads of a and u; v is read after it ended
    assert s.batch_get(["a", "u", "v"]) == [b"1", b"4", b"5"]
    assert order(s) == ["b", "a", "v"]  # a refreshed (a use before the removal), u not adopted, v adopted
    assert "u" not in believed(s) and "v" in believed(s)
    s.check_invariants()


@pytest.mark.clauses("S4", "B2", "F4")
@pytest.mark.parametrize("op", ["get", "batch_get"])
def test_a_read_out_of_memory_is_logged_answers_none_and_keeps_the_file_counted_and_believed(
    fs: FakeFileSystem,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    op: str,
) -> None:
    s = believing(fs, clock)
    assert s.set("k", b"abc")

    def out_of_memory(*args: Any) -> bytes:
        raise MemoryError

    monkeypatch.setattr(fs, "read_file", out_of_memory)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        answer = s.get("k") if op == "get" else s.batch_get(["k"])[0]
    assert answer is None
    assert [r.getMessage() for r in caplog.records] == [f"file store: {path('k')!r} not read: out of memory"]
    assert order(s) == ["k"] and s.evictor.total == 3 and believed(s) == {"k"}  # the file is still there
    s.check_invariants()


@pytest.mark.clauses("F4", "C3")
@pytest.mark.parametrize("op", ["get", "batch_get"])
def test_a_short_read_answers_none_and_keeps_the_file_counted_and_believed(
    fs: FakeFileSystem, clock: FakeClock, op: str
) -> None:
    s = believing(fs, clock)
    assert s.set("k", b"abcd")
    fs.short_reads(1)
    assert (s.get("k") if op == "get" else s.batch_get(["k"])[0]) is None
    assert order(s) == ["k"] and s.evictor.total == 4 and believed(s) == {"k"}  # short is not missing
    assert s.get("k") == b"abcd"
    s.check_invariants()


@pytest.mark.clauses("S4", "F4", "C5")
def test_a_read_out_of_memory_forgets_nothing_even_while_the_keys_first_write_is_in_flight(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = believing(fs, clock)
    read_file = fs.read_file
    seen: list[bool] = []

    def out_of_memory(*args: Any) -> bytes:
        raise MemoryError

    def meanwhile(op: str, done: str) -> None:
        if op == "write":  # the set's temp file is written; its entry is reserved, in flight, not published
            fs.after = None
            fs.put(path("k"), b"theirs")  # another process publishes the key first
            assert s.get("k") == b"theirs" and "k" in believed(s)
            monkeypatch.setattr(fs, "read_file", out_of_memory)
            assert s.get("k") is None
            seen.append("k" in believed(s))  # a read that ran out of memory is no miss
            monkeypatch.setattr(fs, "read_file", read_file)

    fs.after = meanwhile
    assert s.set("k", b"mine")
    assert seen == [True] and s.get("k") == b"mine"
    s.check_invariants()


# -- B2: one log line per failed I/O operation, one per refusal ---------------------------------


@pytest.mark.clauses("C2", "C3", "B2")
def test_a_write_overlapped_by_a_delete_keeps_its_entry_when_the_check_stat_fails(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A delete that overlaps a set makes the set check, after publishing, whether its file survived.  When
    that stat fails with EIO the file's fate is unknown: the entry stays (over-counting is the safe side;
    dropping it would leak capacity behind a file that is on disk)."""
    s = store(fs, clock)

    def delete_then_break_stat(op: str, path: str) -> None:
        if op == "replace":
            fs.before = None
            assert s.delete("k")  # nothing published yet: the delete linearizes before the set
            fs.fail("stat", errno.EIO)

    fs.before = delete_then_break_stat
    assert s.set("k", b"abc")
    assert_said(caplog, r"file store: cannot stat '/cache/k_m\.bin': \[Errno 5\] EIO: '/cache/k_m\.bin'")
    assert set(fs.listing(DIR)) == {"k_m.bin"}
    assert "k" in s.evictor and s.evictor.total == 3
    s.check_invariants()


@pytest.mark.clauses("C2", "C3")
def test_a_write_overlapped_by_a_delete_that_removed_its_file_drops_the_entry(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """The other answer of the same check: the published file is gone (removed by the overlapping delete),
    so no entry may outlive it."""
    s = store(fs, clock)

    def delete_after_publication(op: str, path: str) -> None:
        if op == "replace":
            fs.after = None
            fs.before = None
            s.delete("k")

    fs.after = delete_after_publication
    # An overlapping removal:
    fs.before = lambda op, path: s.evictor.overlaps.start_removal() if op == "replace" else None
    assert s.set("k", b"abc")
    assert fs.listing(DIR) == {}
    assert "k" not in s.evictor and s.evictor.total == 0
    s.check_invariants()


@pytest.mark.clauses("C1", "C3")
@pytest.mark.parametrize("earlier_removals", [0, 1, 2, 3])
def test_a_read_overlapped_by_the_delete_of_its_file_plants_nothing_however_many_removals_came_before(
    fs: FakeFileSystem, clock: FakeClock, earlier_removals: int
) -> None:
    """The epoch must move on every removal, not only the first: a guard that only worked from a fresh
    store (or that reset the counter) would let this probe adopt and believe a deleted file."""
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)
    for i in range(earlier_removals):
        assert s.set(f"x{i}", b"1") and s.delete(f"x{i}")
    fs.put(path("k"), b"abc")  # written by another process: neither tracked nor believed
    once_after(fs, "read", "k", lambda: s.delete("k"))
    assert s.get("k") == b"abc", "the read saw the file before the delete removed it"
    assert "k" not in believed(s), "a belief planted after the delete would be a stale positive (C1)"
    assert "k" not in s.evictor and s.evictor.total == 0, "adopting a deleted file leaks capacity (C3)"
    assert not s.exists("k")
    s.check_invariants()


@pytest.mark.clauses("C1", "V4")
def test_an_overlapped_read_of_a_tracked_key_still_refreshes_its_recency(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """The read linearizes before the removal (which removed another key): it is a use of ``a``."""
    s = store(fs, clock)
    assert s.set("a", b"1") and s.set("b", b"2") and s.set("c", b"3")
    once_after(fs, "read", "a", lambda: s.delete("c"))
    assert s.get("a") == b"1"
    assert order(s) == ["b", "a"]
    s.check_invariants()


@pytest.mark.clauses("C1", "V4", "F6")
@pytest.mark.parametrize("overlapped", [False, True], ids=["alone", "overlapped"])
def test_exists_never_refreshes_recency(fs: FakeFileSystem, clock: FakeClock, overlapped: bool) -> None:
    """``exists`` asks; it does not use the page: the LRU order stays, overlapped by a removal or not."""
    s = store(fs, clock)
    assert s.set("a", b"1") and s.set("b", b"2") and s.set("c", b"3")
    if overlapped:
        once_after(fs, "stat", "a", lambda: s.delete("c"))
    assert s.exists("a")
    assert order(s) == (["a", "b"] if overlapped else ["a", "b", "c"])
    s.check_invariants()


@pytest.mark.clauses("C1")
def test_check_invariants_reports_a_removal_left_half_done(fs: FakeFileSystem, clock: FakeClock) -> None:
    """The checker can fail: a removal that never ended (an odd epoch) is named."""
    s = store(fs, clock)
    s.evictor.overlaps.start_removal()
    with pytest.raises(AssertionError) as caught:
        s.check_invariants()
    assert str(caught.value) == "a removal was left half done"
    s.evictor.overlaps.end_removal()
    s.check_invariants()


# -- S4: bounded reads -------------------------------------------------------------------------------


@pytest.mark.clauses("S4", "F4", "B2")
def test_a_file_larger_than_max_value_size_is_refused_and_stays_counted(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, max_value_size=4, enable_metadata_cache=True)
    assert s.set("k", b"12345") and s.set("j", b"1234")
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert s.get("k") is None
        assert s.get_into("k", bytearray(5)) is False
    assert caplog.text.count("max_value_size") == 2
    assert s.get("j") == b"1234" and s.get_into("j", bytearray(4))
    assert s.evictor.total == 9 and "k" in believed(s)  # a page of ours: still on disk, still counted


# -- C6: one store per namespace ---------------------------------------------------------------------


@pytest.mark.clauses("V2", "F7")
def test_pages_clear_cannot_remove_are_adopted_again_oldest_first_not_in_listing_order(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """Regression (found by the file store machine at the verify budget): the pages ``clear`` could not
    remove went back into the evictor in the directory listing's order (by name here), where the model,
    like start-up, adopts them oldest first.  'z' is written first and 'a' second, so oldest first
    is z, a; by name it would be a, z."""
    s = store(fs, clock, max_size=1000)
    assert s.set("z", b"zz")
    clock.advance(1.0)
    assert s.set("a", b"aa")
    fs.fail_unlink(path("z"), errno.EPERM)
    fs.fail_unlink(path("a"), errno.EPERM)
    assert s.clear() is False
    assert [e.key for e in s._evictor.snapshot()] == ["z", "a"]


@pytest.mark.clauses("V2", "F7", "F8")
def test_pages_clear_cannot_remove_of_one_time_are_adopted_again_in_the_listings_order_not_by_key(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    # Start-up's tie rule (F8): "ab-_m.bin" is listed before "ab_m.bin" ("-" < "_"), though "ab" < "ab-".
    s = store(fs, clock, max_size=1000)
    for key in ("ab", "ab-"):
        assert s.set(key, b"x")
        fs.fail_unlink(f"{DIR}/{key}{NS}.bin", errno.EPERM)
    assert s.clear() is False
    assert order(s) == ["ab-", "ab"]


@pytest.mark.clauses("F6", "C3", "B2")
def test_a_failing_stat_drops_neither_the_entry_nor_its_bytes(fs: FakeFileSystem, clock: FakeClock) -> None:
    # EIO says nothing of the file: it is neither missing nor a stranger's node, so the accounting stays.
    s = store(fs, clock)
    assert s.set("k", b"vv") and s.set("j", b"w")
    fs.fail("stat", errno.EIO)
    assert not s.exists("k")
    assert order(s) == ["k", "j"] and s.evictor.total == 3
    s.check_invariants()
