"""LRUFileEvictor survivors of the mutation run killed (docs/MUTATION.md, "Open survivors"): the ``size``
check of ``commit``, re-adoption next to other entries, one abort among three writers of a key, the key
being re-reserved never its own victim for the free-space floor, and the three writer invariants."""

from __future__ import annotations

import re
from typing import Any

import pytest

from hicache.file_evictor import LRUFileEvictor
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

DIR = "/d"


def path_of(key: str) -> str:
    return f"{DIR}/{key}.bin"


def make(
    clock: FakeClock, victims: list[str] | None = None, disk: int = 100, **limits: Any
) -> LRUFileEvictor:
    fs = FakeFileSystem(clock, disk_size=disk)
    fs.mkdir(DIR)
    return LRUFileEvictor(
        fs, path_of, directory=DIR, on_evict=(victims.append if victims is not None else None), **limits
    )


def on_disk(ev: LRUFileEvictor, key: str, size: int) -> None:
    fs = ev._fs
    assert isinstance(fs, FakeFileSystem)
    fs.put(path_of(key), b"x" * size)
    assert ev.touch(key, size)


@pytest.mark.clauses("B1", "V4")
@pytest.mark.parametrize(
    ("size", "error", "message"),
    [
        (-1, ValueError, "size must be >= 0, got -1"),
        ("3", TypeError, "size must be an int, got str '3'"),
    ],
)
def test_commit_rejects_a_bad_size_with_a_message_naming_size(
    clock: FakeClock, size: Any, error: type[Exception], message: str
) -> None:
    ev = make(clock)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        ev.commit("k", size)
    assert "k" not in ev and ev.total == 0


@pytest.mark.clauses("V4", "C3")
def test_commit_re_adopts_a_vanished_zero_byte_file(clock: FakeClock) -> None:
    ev = make(clock)
    on_disk(ev, "a", 5)
    ev.commit("empty", 0)
    assert [(e.key, e.size, e.in_flight) for e in ev.snapshot()] == [("a", 5, False), ("empty", 0, False)]
    assert ev.total == 5
    ev.check_invariants()


@pytest.mark.clauses("V2", "V4", "C3")
def test_re_adoption_while_other_entries_are_tracked_adds_to_the_total(clock: FakeClock) -> None:
    ev = make(clock)
    on_disk(ev, "a", 5)
    assert ev.reserve("w", 2)
    ev.commit("b", 3)  # "b" vanished (or was never reserved): its writer says its size
    assert ev.total == 10
    assert [(e.key, e.size) for e in ev.snapshot()] == [("a", 5), ("w", 2), ("b", 3)]
    ev.check_invariants()


@pytest.mark.clauses("V4", "V5", "C5")
def test_aborting_one_of_three_writes_of_a_key_keeps_the_other_two_in_flight(clock: FakeClock) -> None:
    victims: list[str] = []
    ev = make(clock, victims, max_size=10, eviction_ratio=1.0)
    for _ in range(3):
        assert ev.reserve("k", 4)
    ev.abort("k")
    entry = ev._entry("k")
    assert entry is not None and entry.writers == 2
    ev.abort("k")  # the third write is still running
    assert [(e.key, e.size, e.in_flight) for e in ev.snapshot()] == [("k", 4, True)]
    assert ev.total == 4
    assert ev.reserve("x", 6)  # fits beside the in-flight entry
    assert not ev.reserve("y", 1)  # "k" is in flight: never a victim
    assert victims == []
    ev.commit("k")
    assert [(e.key, e.in_flight) for e in ev.snapshot()] == [("x", True), ("k", False)]
    ev.check_invariants()


@pytest.mark.clauses("V3", "V5")
def test_re_reserving_a_committed_key_never_evicts_it_for_the_free_space_floor(clock: FakeClock) -> None:
    victims: list[str] = []
    ev = make(clock, victims, disk=12, min_free_space=3)
    on_disk(ev, "a", 4)
    on_disk(ev, "b", 3)  # 7 of 12 bytes used: 5 free
    assert ev.reserve("a", 4)  # 5 - 4 < 3: "b" goes, "a" (least recently used) is the key itself
    assert victims == ["b"]
    assert [(e.key, e.size, e.in_flight) for e in ev.snapshot()] == [("a", 4, True)]
    assert ev.total == 4
    ev.check_invariants()


@pytest.mark.clauses("C3")
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("writers", -1, "negative writers"),
        ("published", True, "published, idle"),
        ("seen", 99, "seen after the last commit"),
    ],
)
def test_check_invariants_names_each_corrupted_writer_field(
    clock: FakeClock, field: str, value: object, message: str
) -> None:
    ev = make(clock)
    on_disk(ev, "a", 5)
    ev.check_invariants()
    setattr(ev._entries["a"], field, value)
    with pytest.raises(AssertionError, match=f"^{re.escape(message)}$"):
        ev.check_invariants()
