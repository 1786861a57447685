"""A probe overlapped by a removal, on one thread, at a chosen point (C1, C3, V4).

The store tells a probe that a removal (delete, clear, eviction) overlapped it by an epoch counter: odd
while a removal runs, moved on once one ran.  These tests run the removal from the fake filesystem's hook
right after the probe's own filesystem call, so the overlap is exact and needs no threads.  The C1 schedule
tests explore every interleaving of one probe and one removal from a fresh store; these add what those
cannot see: a store whose epoch has already moved (an earlier removal), and the recency rules of an
overlapped probe.
"""

from __future__ import annotations

from typing import Any

import pytest

from hicache import HiCacheFile
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import path, store


def once_after(fs: FakeFileSystem, op: str, key: str, action: Any) -> None:
    """Run ``action`` right after the store's next ``op`` on ``key``'s file (once)."""

    def hook(done_op: str, done_path: str) -> None:
        if done_op == op and done_path == path(key):
            fs.after = None
            action()

    fs.after = hook


def order(s: HiCacheFile) -> list[str]:
    return [e.key for e in s.evictor.snapshot()]


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
