"""HiCacheFile edges pinned for mutation testing (docs/MUTATION.md), on the fake filesystem.

The run of 2026-12-01 (after the probes became one ``_look``/``_observe`` and the batches learn in one
lock acquisition) left these alive: what a batch read teaches when a key of it is missing or a removal
overlaps it, a batch with a key whose escaped name is too long, a read that runs out of memory or comes
back short, and which listing entries are pages under a shared group.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hicache import HiCacheFile
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, calls_during, path, store

OTHER = 2000


def order(s: HiCacheFile) -> list[str]:
    return [e.key for e in s.evictor.snapshot()]


def believing(fs: FakeFileSystem, clock: FakeClock) -> HiCacheFile:
    return store(fs, clock, enable_metadata_cache=True, metadata_ttl=-1)


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


@pytest.mark.clauses("F2", "S5", "F5")
@pytest.mark.parametrize("op", ["batch_exists", "batch_get"])
def test_a_batch_with_a_key_whose_escaped_name_is_too_long_is_refused_like_a_single_key(
    fs: FakeFileSystem, clock: FakeClock, op: str
) -> None:
    s = store(fs, clock)
    fits, too_long = "_" * 83, "_" * 84  # "_" escapes to 3 bytes; the namespace's "_m.bin" adds 6
    assert getattr(s, op)([fits]) in (0, [None])
    message = r"^key makes a file name of 258 bytes \(limit 255\), got '_{84}'$"
    with pytest.raises(ValueError, match=message):
        s.exists(too_long)
    with pytest.raises(ValueError, match=message):
        getattr(s, op)(["a", too_long])


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


@pytest.mark.clauses("S3", "F8")
def test_with_a_shared_group_start_up_adopts_the_pages_of_the_group_and_skips_a_strangers(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir(DIR, gid=0, mode=0o2770)
    fs.put(path("member"), b"12", uid=OTHER)
    fs.files[path("member")].gid = 0  # another user of the shared group
    fs.put(path("stranger"), b"345", uid=OTHER)  # group 2000: not the shared group
    fs.put(path("mine"), b"6")
    s = store(fs, clock, shared_group=0)
    assert sorted(order(s)) == ["member", "mine"] and s.evictor.total == 3
    s.check_invariants()


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


@pytest.mark.clauses("S1", "B1")
def test_a_refused_directory_is_named_as_given_once_and_a_file_there_names_the_setting(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir(DIR, mode=0o777)
    with pytest.raises(
        PermissionError, match=r"^storage directory /cache \(owner [^)]*\), mode 0777\) is writable"
    ):
        store(fs, clock)  # resolved to itself: named once, with no "(from ...)"
    fs.make_dir("/base", mode=0o755)
    fs.put("/base/f", b"")
    with pytest.raises(
        NotADirectoryError,
        match=r"^storage directory /base/f is a file, not a directory: choose another storage_dir"
        r" \(HICACHE_FILE_STORAGE_DIR\)$",
    ):
        HiCacheFile("/base/f", fs=fs, clock=clock)
