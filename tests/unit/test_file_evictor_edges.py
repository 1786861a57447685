"""LRUFileEvictor edges pinned for mutation testing (docs/MUTATION.md): exact messages and log lines,
the boundaries of the cap and of the free-space floor, the key being re-reserved never its own victim,
and invariant checks that fire on a corrupted structure."""

from __future__ import annotations

import errno
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from hicache.file_evictor import LRUFileEvictor, check_bytes_limit
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

DIR = "/d"


def path_of(key: str) -> str:
    return f"{DIR}/{key}.bin"


@pytest.fixture
def fs(clock: FakeClock) -> FakeFileSystem:
    fs = FakeFileSystem(clock, disk_size=10)
    fs.mkdir(DIR)
    return fs


def make(fs: FakeFileSystem, victims: list[str] | None = None, **limits: Any) -> LRUFileEvictor:
    return LRUFileEvictor(
        fs, path_of, directory=DIR, on_evict=(victims.append if victims is not None else None), **limits
    )


def on_disk(fs: FakeFileSystem, ev: LRUFileEvictor, key: str, size: int) -> None:
    fs.put(path_of(key), b"x" * size)
    assert ev.touch(key, size)


@pytest.mark.clauses("B1", "V1")
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_size": -1}, ValueError, "max_size must be >= 0, got -1"),
        ({"min_free_space": -1}, ValueError, "min_free_space must be >= 0, got -1"),
        (
            {"max_size": 2**63},
            ValueError,
            "max_size must be at most 2**63 - 1 bytes, got 9223372036854775808",
        ),
        (
            {"min_free_space": 10**400},
            ValueError,
            "min_free_space must be at most 2**63 - 1 bytes,"
            " got 10000000000000000000...0000000000 (401 digits)",
        ),
        ({"eviction_ratio": "x"}, TypeError, "eviction_ratio must be a number, got str 'x'"),
        ({"path_of": 3}, TypeError, "path_of must be callable, got int 3"),
        ({"on_evict": 3}, TypeError, "on_evict must be callable or None, got int 3"),
        ({"accept": 3}, TypeError, "accept must be callable or None, got int 3"),
    ],
)
def test_bad_arguments_are_rejected_with_exact_messages(
    fs: FakeFileSystem, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"path_of": path_of, "directory": DIR, **kwargs}
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        LRUFileEvictor(fs, arguments.pop("path_of"), **arguments)


@pytest.mark.clauses("B1", "V3")
def test_a_negative_reservation_is_rejected_with_an_exact_message(fs: FakeFileSystem) -> None:
    with pytest.raises(ValueError, match=r"^size must be >= 0, got -1$"):
        make(fs, max_size=4).reserve("a", -1)


@pytest.mark.clauses("V2")
def test_the_owner_lock_is_the_evictor_lock_and_membership_answers(fs: FakeFileSystem) -> None:
    lock = threading.RLock()
    held: list[bool] = []

    def on_evict(key: str) -> None:
        # Another thread cannot take the owner's lock now: the evictor is holding it (V6: lock held).
        def try_lock() -> None:
            got = lock.acquire(blocking=False)
            held.append(not got)
            if got:
                lock.release()

        other = threading.Thread(target=try_lock)
        other.start()
        other.join()

    ev = LRUFileEvictor(
        fs, path_of, directory=DIR, lock=lock, max_size=1, eviction_ratio=1.0, on_evict=on_evict
    )
    assert ev.reserve("a", 1)
    assert "a" in ev and "b" not in ev
    ev.commit("a")
    assert ev.reserve("b", 1) and held == [True]


@pytest.mark.clauses("V3", "F8")
def test_evict_with_the_total_exactly_at_the_cap_evicts_nothing(fs: FakeFileSystem) -> None:
    victims: list[str] = []
    ev = make(fs, victims, max_size=4)
    on_disk(fs, ev, "a", 4)
    assert ev.evict()
    assert victims == [] and ev.total == 4


@pytest.mark.clauses("V1", "V3")
def test_a_cap_of_one_byte_is_a_cap(fs: FakeFileSystem) -> None:
    victims: list[str] = []
    ev = make(fs, victims, max_size=1, eviction_ratio=1.0)
    assert not ev.reserve("big", 2)
    on_disk(fs, ev, "a", 1)
    assert ev.reserve("b", 1)
    assert victims == ["a"] and ev.total == 1


@pytest.mark.clauses("V3", "V5")
def test_a_key_being_reserved_again_is_never_its_own_victim(fs: FakeFileSystem) -> None:
    victims: list[str] = []
    ev = make(fs, victims, max_size=4, eviction_ratio=1.0)
    on_disk(fs, ev, "a", 2)
    on_disk(fs, ev, "b", 2)
    assert ev.reserve("a", 3)  # others (b) 2 + 3 > 4: b goes, a's old entry is not a victim
    assert victims == ["b"]
    assert [(e.key, e.size, e.in_flight) for e in ev.snapshot()] == [("a", 3, True)]


@pytest.mark.clauses("V1", "V3")
def test_without_a_floor_the_free_space_is_never_probed(fs: FakeFileSystem) -> None:
    fs.fail("free", errno.EIO)
    ev = make(fs, max_size=100, min_free_space=0)
    assert ev.reserve("a", 1)
    assert fs.calls["free"] == 0


@pytest.mark.clauses("V3")
def test_free_space_exactly_at_the_floor_is_enough_and_probed_once(fs: FakeFileSystem) -> None:
    victims: list[str] = []
    ev = make(fs, victims, min_free_space=4)
    on_disk(fs, ev, "a", 4)  # free 6: 6 - 2 == 4, the floor
    assert ev.reserve("b", 2)
    assert victims == [] and fs.calls["free"] == 1


@pytest.mark.clauses("V3")
def test_the_free_space_pass_stops_as_soon_as_the_floor_is_reached(fs: FakeFileSystem) -> None:
    victims: list[str] = []
    ev = make(fs, victims, min_free_space=4)
    on_disk(fs, ev, "a", 2)
    on_disk(fs, ev, "b", 2)  # free 6; reserving 4 needs 2 more bytes free: a alone is enough
    assert ev.reserve("c", 4)
    assert victims == ["a"]
    assert [e.key for e in ev.snapshot()] == ["b", "c"]


@pytest.mark.clauses("V4", "B2")
def test_adopting_a_missing_file_is_quiet_and_an_unreadable_one_is_logged(
    fs: FakeFileSystem, caplog: pytest.LogCaptureFixture
) -> None:
    ev = make(fs, max_size=4)
    with caplog.at_level(logging.WARNING, logger="hicache.file_evictor"):
        assert not ev.touch("gone")
        assert caplog.records == []
        fs.put(path_of("k"), b"xy")
        fs.fail("stat", errno.EIO)
        assert not ev.touch("k")
    [record] = caplog.records
    assert re.fullmatch(r"file evictor: cannot stat 'k' to adopt it: \[Errno 5\] .*", record.getMessage())


@pytest.mark.clauses("V5", "B2")
def test_an_unremovable_victim_and_a_failed_free_space_probe_are_logged(
    fs: FakeFileSystem, caplog: pytest.LogCaptureFixture
) -> None:
    ev = make(fs, max_size=2, eviction_ratio=1.0)
    on_disk(fs, ev, "a", 2)
    fs.fail_unlink(path_of("a"), errno.EPERM)
    floor = make(fs, min_free_space=1)
    fs.fail("free", errno.EIO)
    with caplog.at_level(logging.WARNING, logger="hicache.file_evictor"):
        assert not ev.reserve("b", 2)
        assert not floor.reserve("c", 1)
    messages = [r.getMessage() for r in caplog.records]
    assert re.fullmatch(r"file evictor: cannot remove 'a', skipping it for 30 s: \[Errno 1\] .*", messages[0])
    assert re.fullmatch(r"file evictor: cannot probe free space of '/d': \[Errno 5\] .*", messages[1])


def _negative(ev: LRUFileEvictor) -> None:
    entry = ev._entry("a")
    assert entry is not None
    entry.size = -2  # corrupt, with a total that still matches the sizes
    ev._total = -2


@pytest.mark.clauses("C3")
@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda ev: setattr(ev, "_total", ev._total + 1), "total != sum of sizes"),
        (lambda ev: _negative(ev), "negative size"),
    ],
    ids=["total", "negative"],
)
def test_check_invariants_fires_on_each_corruption(
    fs: FakeFileSystem, corrupt: Callable[[LRUFileEvictor], object], message: str
) -> None:
    ev = make(fs, max_size=4)
    on_disk(fs, ev, "a", 2)
    ev.check_invariants()
    corrupt(ev)
    with pytest.raises(AssertionError, match=f"^{re.escape(message)}$"):
        ev.check_invariants()


@pytest.mark.clauses("B1", "V3")
def test_a_cap_at_the_largest_file_offset_still_evicts_by_its_ratio(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=2**63 - 1, eviction_ratio=0.5)
    assert ev.max_size == 2**63 - 1
    assert ev.reserve("a", 3)


@pytest.mark.clauses("B1")
def test_the_size_limit_names_the_value_as_given() -> None:
    assert check_bytes_limit("max_size", 2**63 - 1, "8Ei") == 2**63 - 1
    with pytest.raises(ValueError, match=r"^max_size must be at most 2\*\*63 - 1 bytes, got '10000P'$"):
        check_bytes_limit("max_size", 10**19, "10000P")
    with pytest.raises(
        ValueError, match=r"^min_free_space must be at most 2\*\*63 - 1 bytes, got 9223372036854775808$"
    ):
        check_bytes_limit("min_free_space", 2**63)


@pytest.mark.clauses("S8", "V3", "V5", "V6")
def test_relieve_evicts_as_for_a_cap_at_the_bytes_held_and_never_the_writer_or_a_write_in_flight(
    fs: FakeFileSystem,
) -> None:
    victims: list[str] = []
    ev = make(fs, victims, max_size=1000, eviction_ratio=0.5)
    for key in ("a", "b", "c"):
        on_disk(fs, ev, key, 2)
    assert ev.reserve("held", 1) and ev.reserve("w", 1)  # two writes in flight, "w" the one that failed
    ev._entries.move_to_end("held", last=False)  # in flight, and the oldest: skipped, never a victim
    # others: a, b, c and held = 7 bytes; down to floor(7 * 0.5) - 1 = 2: a, b and c go (freeing 6 > 5).
    assert ev.relieve("w", 1)
    assert victims == ["a", "b", "c"] and [e.key for e in ev.snapshot()] == ["held", "w"]
    assert not ev.relieve("w", 1)  # nothing evictable is left: no retry worth making
    assert victims == ["a", "b", "c"] and ev.total == 2


@pytest.mark.clauses("S8", "V1")
def test_relieve_evicts_nothing_when_eviction_is_off(fs: FakeFileSystem) -> None:
    victims: list[str] = []
    ev = make(fs, victims)
    on_disk(fs, ev, "a", 2)
    assert ev.reserve("w", 1)
    assert not ev.relieve("w", 1) and victims == [] and "a" in ev


@pytest.mark.clauses("S7", "V5", "V6")
def test_a_resting_victim_gets_no_callback_and_no_unlink_until_its_back_off_ends(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    victims: list[str] = []
    ev = make(fs, victims, max_size=4, eviction_ratio=1.0)
    on_disk(fs, ev, "a", 2)
    on_disk(fs, ev, "b", 2)
    fs.fail_unlink(path_of("a"))
    assert ev.reserve("c", 2)  # "a" tried and failed (it rests), "b" evicted
    assert victims == ["a", "b"]
    unlinks = fs.calls["unlink"]
    ev.commit("c")
    assert not ev.reserve("d", 4) and victims == ["a", "b", "c"]  # "a" rests: skipped untouched
    assert fs.calls["unlink"] - unlinks == 1
    clock.advance(30.0)
    fs.allow_unlink(path_of("a"))
    assert ev.reserve("d", 4) and victims == ["a", "b", "c", "a"]  # the back-off is over: tried, gone
    assert [e.key for e in ev.snapshot()] == ["d"]


def _evicted_by_relieve(
    fs: FakeFileSystem, sizes: dict[str, int], writer: int | None, size: int = 0
) -> list[str]:
    """The victims of ``relieve("w", size)`` at ratio 0.5 over committed files of ``sizes`` (oldest
    first), with "w" in flight at ``writer`` bytes (or untracked when None)."""
    victims: list[str] = []
    ev = make(fs, victims, max_size=1000, eviction_ratio=0.5)
    for key, held in sizes.items():
        on_disk(fs, ev, key, held)
    if writer is not None:
        assert ev.reserve("w", writer)
    evicted = ev.relieve("w", size)
    assert evicted == bool(victims)
    ev.check_invariants()
    return victims


@pytest.mark.clauses("S8", "V3")
def test_relieve_counts_the_bytes_held_by_the_others_not_by_the_failed_write(fs: FakeFileSystem) -> None:
    # others = 4 (the writer's 4 in flight excluded): down to floor(4 * 0.5) = 2, so a and b go and the walk
    # stops with the others exactly at the target (counting the writer, or >= at the target, takes c, d too).
    assert _evicted_by_relieve(fs, dict.fromkeys("abcd", 1), writer=4) == ["a", "b"]


@pytest.mark.clauses("S8", "V3")
def test_relieve_for_an_untracked_key_counts_every_byte_held(fs: FakeFileSystem) -> None:
    # others = 11: down to floor(5.5) = 5, so a (5) and b (1) go; a key not tracked holds no byte of them.
    assert _evicted_by_relieve(fs, {"a": 5, "b": 1, "c": 5}, writer=None) == ["a", "b"]


@pytest.mark.clauses("S8", "V3")
def test_relieve_with_one_byte_held_evicts_it_and_with_none_held_evicts_nothing(fs: FakeFileSystem) -> None:
    assert _evicted_by_relieve(fs, {"a": 1}, writer=None) == ["a"]
    # Only an empty file besides the writer: no eviction can give a byte back, so none is tried (False).
    assert _evicted_by_relieve(fs, {"z": 0}, writer=1, size=1) == []


@pytest.mark.clauses("S8", "V5")
def test_relieve_never_evicts_the_writers_own_committed_file(fs: FakeFileSystem) -> None:
    victims: list[str] = []
    ev = make(fs, victims, max_size=1000, eviction_ratio=0.5)
    for key in ("w", "a", "b"):  # the writer's own file is committed and the oldest
        on_disk(fs, ev, key, 2)
    assert ev.relieve("w", 2)  # others 4: down to floor(2) - 2 = 0, every other file goes
    assert victims == ["a", "b"] and [e.key for e in ev.snapshot()] == ["w"]


@pytest.mark.clauses("S8", "S7", "V5")
def test_relieve_lets_an_unremovable_victim_rest_and_evicts_the_next(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    victims: list[str] = []
    ev = make(fs, victims, max_size=1000, eviction_ratio=0.5)
    on_disk(fs, ev, "a", 2)
    on_disk(fs, ev, "b", 2)
    fs.fail_unlink(path_of("a"), errno.EPERM)
    assert ev.relieve("w", 1)  # others 4: down to floor(2) - 1 = 1; a cannot go (it rests), b goes
    assert victims == ["a", "b"] and [e.key for e in ev.snapshot()] == ["a"]
    clock.advance(29.0)
    assert not ev.relieve("w", 1) and victims == ["a", "b"]  # a rests: no callback, no unlink
    clock.advance(1.0)
    fs.allow_unlink(path_of("a"))
    assert ev.relieve("w", 1) and victims == ["a", "b", "a"] and len(ev) == 0


@pytest.mark.clauses("S8", "B1")
def test_relieve_rejects_a_negative_size_with_an_exact_message_and_accepts_zero(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=4)
    with pytest.raises(ValueError, match=r"^size must be >= 0, got -1$"):
        ev.relieve("w", -1)
    assert not ev.relieve("w", 0)  # nothing held: nothing to evict


@pytest.mark.clauses("V4")
def test_touch_of_a_tracked_key_answers_true_and_makes_it_newest_without_a_stat(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=10)
    on_disk(fs, ev, "a", 1)
    on_disk(fs, ev, "b", 1)
    stats = fs.calls["stat"]
    assert ev.touch("a") is True
    assert [e.key for e in ev.snapshot()] == ["b", "a"] and fs.calls["stat"] == stats


@pytest.mark.clauses("F4", "C5")
def test_every_publication_moves_the_mark_so_a_miss_older_than_a_republished_file_never_stands(
    fs: FakeFileSystem,
) -> None:
    ev = make(fs)
    on_disk(fs, ev, "a", 1)  # the first publication
    for _ in range(3):
        mark = ev.overlaps.publications  # a probe of "a" begins, and misses
        assert ev.reserve("a", 1)
        ev.commit("a")  # meanwhile "a" is written again: a newer file than the probe saw missing
        assert ev.overlaps.publications > mark  # an opaque mark: only its moving is promised
        assert not ev.forget_missing("a", mark) and "a" in ev


@pytest.mark.clauses("C1")
def test_a_removal_under_way_or_started_since_overlaps_a_probe_at_every_mark(fs: FakeFileSystem) -> None:
    overlaps = make(fs).overlaps
    for _ in range(4):  # four removals, one after another: marks idle and under way, old and new
        idle = overlaps.removals
        assert not overlaps.removing and not overlaps.removal_overlapped(idle)  # a fresh evictor too
        overlaps.start_removal()
        under_way = overlaps.removals
        assert overlaps.removing and overlaps.removal_overlapped(idle)  # one started since the probe began
        assert overlaps.removal_overlapped(under_way)  # one was under way when it began
        overlaps.end_removal()
        assert overlaps.removal_overlapped(under_way) and overlaps.removal_overlapped(idle)
