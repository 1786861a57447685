"""The evictor's compact entries (issue 24): pages adopted in bulk at start-up hold no object of their own,
and behave exactly as full entries do once anything but their recency changes (V2-V5, F4, C3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hicache.file_evictor import LRUFileEvictor
from hicache.fs import OSFileSystem

pytestmark = pytest.mark.clauses("V2", "V4", "F8", "C3")


def _evictor(directory: Path, *, max_size: int = 0, eviction_ratio: float = 0.9) -> LRUFileEvictor:
    return LRUFileEvictor(
        OSFileSystem(),
        lambda key: os.path.join(directory, key),
        directory=str(directory),
        max_size=max_size,
        eviction_ratio=eviction_ratio,
    )


def test_pages_adopted_in_bulk_share_one_size_object_and_keep_the_order_given(tmp_path: Path) -> None:
    ev = _evictor(tmp_path)
    ev.adopt_many((f"k{i}", 4096 + 0) for i in range(1000))
    values = list(ev._entries.values())
    assert len({id(v) for v in values}) == 1 and all(type(v) is int for v in values)
    assert [e.key for e in ev.snapshot()] == [f"k{i}" for i in range(1000)]
    assert ev.total == 1000 * 4096
    ev.check_invariants()


def test_a_key_tracked_already_is_only_made_most_recent_by_adopt_many(tmp_path: Path) -> None:
    ev = _evictor(tmp_path)
    assert ev.reserve("a", 3)
    ev.adopt_many([("b", 5), ("a", 99)])
    assert [(e.key, e.size, e.in_flight) for e in ev.snapshot()] == [("b", 5, False), ("a", 3, True)]
    assert ev.total == 8


def test_a_compact_entry_becomes_a_full_one_in_place_when_a_write_of_its_key_starts(tmp_path: Path) -> None:
    ev = _evictor(tmp_path, max_size=100)
    ev.adopt_many([("a", 10), ("b", 20), ("c", 30)])
    assert ev.reserve("b", 25)  # the old entry does not count against the cap, then is replaced
    assert [(e.key, e.size, e.in_flight) for e in ev.snapshot()] == [
        ("a", 10, False),
        ("c", 30, False),
        ("b", 25, True),
    ]
    ev.abort("b")  # V4: sequential abort drops the entry
    assert [e.key for e in ev.snapshot()] == ["a", "c"] and ev.total == 40
    ev.check_invariants()


def test_a_miss_older_than_the_bulk_adoption_does_not_untrack_its_pages(tmp_path: Path) -> None:
    ev = _evictor(tmp_path)
    before = ev.overlaps.publications  # a probe began before start-up adopted the pages
    ev.adopt_many([("a", 10)])
    assert not ev.forget_missing("a", before)
    assert "a" in ev
    assert ev.forget_missing("a", ev.overlaps.publications)  # a miss after the adoption stands
    assert "a" not in ev and ev.total == 0


def test_compact_victims_are_evicted_oldest_first_and_refunded(tmp_path: Path) -> None:
    for key in "abc":
        (tmp_path / key).write_bytes(b"x" * 10)
    ev = _evictor(tmp_path, max_size=30, eviction_ratio=1.0)
    ev.adopt_many([("a", 10), ("b", 10), ("c", 10)])
    ev.touch("a")
    assert ev.reserve("d", 15)
    assert [e.key for e in ev.snapshot()] == ["a", "d"] and ev.total == 25  # b then c, down to 30 - 15
    assert sorted(os.listdir(tmp_path)) == ["a"]
    ev.check_invariants()
