"""Deterministic unit tests of LRUFileEvictor on the fake filesystem (V1-V6, C3, B1)."""

from __future__ import annotations

import errno
from typing import Any

import pytest

from hicache import LRUFileEvictor
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

DIR = "/d"


def path_of(key: str) -> str:
    return f"{DIR}/{key}.bin"


def make(fs: FakeFileSystem, calls: list[str] | None = None, **limits: Any) -> LRUFileEvictor:
    def on_evict(key: str) -> None:
        if calls is not None:
            calls.append(key)

    return LRUFileEvictor(fs, path_of, directory=DIR, on_evict=on_evict, **limits)


@pytest.fixture
def fs(clock: FakeClock) -> FakeFileSystem:
    fs = FakeFileSystem(clock)
    fs.mkdir(DIR)
    return fs


def write(fs: FakeFileSystem, ev: LRUFileEvictor, key: str, size: int) -> bool:
    """What the store does: reserve, write, commit."""
    if not ev.reserve(key, size):
        return False
    fs.put(path_of(key), b"x" * size)
    ev.commit(key)
    return True


def keys(ev: LRUFileEvictor) -> list[str]:
    return [e.key for e in ev.snapshot()]


@pytest.mark.clauses("V1")
def test_evictor_without_cap_or_floor_admits_everything_and_never_unlinks(fs: FakeFileSystem) -> None:
    ev = make(fs)
    assert not ev.enabled
    for i in range(20):
        assert write(fs, ev, f"k{i}", 1000)
    assert fs.calls["unlink"] == 0 and fs.calls["free"] == 0
    assert ev.total == 20_000 and len(ev) == 20
    ev.check_invariants()


@pytest.mark.clauses("V3", "V2")
def test_reserve_over_the_cap_evicts_lru_down_to_the_ratio_floor(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=100, eviction_ratio=0.5)
    for key in "abcd":
        assert write(fs, ev, key, 20)
    ev.touch("a")  # a becomes most recently used: b is now the oldest
    assert write(fs, ev, "e", 30)  # 80 + 30 > 100: evict until total <= 50 - 30 = 20
    assert keys(ev) == ["a", "e"]
    assert ev.total == 50
    assert sorted(fs.listing(DIR)) == ["a.bin", "e.bin"]
    ev.check_invariants()


@pytest.mark.clauses("V3")
def test_reserve_that_fits_under_the_cap_evicts_nothing(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=100, eviction_ratio=0.5)
    for key in "abcde":
        assert write(fs, ev, key, 20)  # exactly 100: total + n never exceeds the cap
    assert fs.calls["unlink"] == 0 and ev.total == 100


@pytest.mark.clauses("V3")
def test_value_larger_than_the_cap_is_refused_without_evicting(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=100)
    assert write(fs, ev, "a", 50)
    assert not ev.reserve("big", 101)
    assert keys(ev) == ["a"] and fs.calls["unlink"] == 0


@pytest.mark.clauses("V3", "V4")
def test_reserving_a_tracked_key_replaces_its_size(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=100, eviction_ratio=1.0)
    assert write(fs, ev, "a", 60)
    assert write(fs, ev, "b", 30)
    assert ev.reserve("a", 70)  # counted as 30 + 70: fits; "a" itself is never its own victim
    assert ev.snapshot()[-1] == ("a", 70, True)
    assert ev.total == 100 and fs.calls["unlink"] == 0


@pytest.mark.clauses("V3")
def test_min_free_space_evicts_until_free_space_minus_the_write_reaches_the_floor(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, disk_size=100)
    fs.mkdir(DIR)
    ev = make(fs, min_free_space=30)
    for key in "abc":
        assert write(fs, ev, key, 20)  # free: 80, 60, 40
    assert write(fs, ev, "d", 20)  # 40 - 20 < 30: evict a (free 60 - 20 = 40 >= 30)
    assert keys(ev) == ["b", "c", "d"]
    assert fs.calls["free"] == 5  # one probe per reserve, plus the re-probe after evicting


@pytest.mark.clauses("V3")
def test_min_free_space_refuses_when_other_files_fill_the_disk(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, disk_size=100)
    fs.mkdir(DIR)
    fs.put(f"{DIR}/someone-else.bin", b"x" * 70)
    ev = make(fs, min_free_space=30)
    assert write(fs, ev, "a", 0)
    assert not ev.reserve("b", 10)  # 30 - 10 < 30; evicting "a" frees nothing; the re-probe says no
    assert keys(ev) == []  # "a" was evicted trying
    ev.check_invariants()


@pytest.mark.clauses("V4")
def test_abort_gives_the_bytes_back_and_commit_ends_the_flight(fs: FakeFileSystem) -> None:
    calls: list[str] = []
    ev = make(fs, calls, max_size=100)
    assert ev.reserve("a", 40) and ev.reserve("b", 40)
    assert ev.snapshot() == (("a", 40, True), ("b", 40, True))
    ev.abort("a")
    ev.commit("b")
    assert ev.snapshot() == (("b", 40, False),) and ev.total == 40
    ev.abort("nothing")  # no-op
    assert calls == [], "V6: abort never calls on_evict"


@pytest.mark.clauses("V4")
def test_touch_adopts_an_untracked_file_with_its_real_size(fs: FakeFileSystem) -> None:
    ev = make(fs)
    fs.put(path_of("x"), b"123456")
    assert ev.touch("x")
    assert ev.snapshot() == (("x", 6, False),)
    assert not ev.touch("missing")
    assert ev.touch("y", 3)  # a size the caller knows needs no stat
    assert ev.total == 9 and fs.calls["stat"] == 2


@pytest.mark.clauses("V5")
def test_eviction_never_removes_a_write_in_flight(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=100, eviction_ratio=1.0)
    assert ev.reserve("a", 60)  # in flight
    assert not ev.reserve("b", 60)
    assert keys(ev) == ["a"] and fs.calls["unlink"] == 0


@pytest.mark.clauses("V5", "V6")
def test_a_file_already_gone_counts_as_evicted_and_still_gets_its_callback(fs: FakeFileSystem) -> None:
    calls: list[str] = []
    ev = make(fs, calls, max_size=100, eviction_ratio=1.0)
    assert write(fs, ev, "a", 60)
    fs.remove(path_of("a"))  # another process
    assert write(fs, ev, "b", 60)
    assert calls == ["a"] and keys(ev) == ["b"] and ev.total == 60


@pytest.mark.clauses("V5", "V6")
@pytest.mark.parametrize("code", [errno.EPERM, errno.EBUSY, errno.EISDIR, errno.EROFS, errno.EIO])
def test_an_unremovable_file_is_skipped_and_eviction_goes_on(fs: FakeFileSystem, code: int) -> None:
    calls: list[str] = []
    ev = make(fs, calls, max_size=100, eviction_ratio=1.0)
    assert write(fs, ev, "stuck", 40)
    assert write(fs, ev, "b", 40)
    fs.fail_unlink(path_of("stuck"), code)
    assert write(fs, ev, "c", 40)  # stuck is skipped, b goes
    assert calls == ["stuck", "b"], "every victim tried gets on_evict, once"
    assert keys(ev) == ["stuck", "c"] and ev.total == 80
    assert "stuck.bin" in fs.listing(DIR)
    ev.check_invariants()


@pytest.mark.clauses("V5", "S7")
def test_when_nothing_can_be_evicted_the_write_is_refused_after_one_try_per_victim(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    ev = make(fs, max_size=100, eviction_ratio=1.0)
    for key in "ab":
        assert write(fs, ev, key, 50)
        fs.fail_unlink(path_of(key))
    assert not ev.reserve("c", 10)
    assert fs.calls["unlink"] == 2, "each victim tried once: no spinning"
    assert not ev.reserve("c", 10)
    assert fs.calls["unlink"] == 2, "both rest (S7): not tried again before the back-off ends"
    clock.advance(30.0)
    assert not ev.reserve("c", 10)
    assert fs.calls["unlink"] == 4
    assert ev.total == 100


@pytest.mark.clauses("V6")
def test_on_evict_runs_before_the_unlink_while_the_file_still_exists(fs: FakeFileSystem) -> None:
    seen: list[bool] = []
    ev = LRUFileEvictor(
        fs,
        path_of,
        directory=DIR,
        max_size=10,
        eviction_ratio=1.0,
        on_evict=lambda key: seen.append(f"{key}.bin" in fs.listing(DIR)),
    )
    assert write(fs, ev, "a", 10)
    assert write(fs, ev, "b", 10)
    assert seen == [True]


@pytest.mark.clauses("V6")
def test_clear_forgets_everything_without_callbacks_but_keeps_writes_in_flight(fs: FakeFileSystem) -> None:
    calls: list[str] = []
    ev = make(fs, calls, max_size=100)
    assert write(fs, ev, "a", 10)
    assert ev.reserve("b", 20)
    ev.clear()
    assert calls == [] and ev.snapshot() == (("b", 20, True),) and ev.total == 20


@pytest.mark.clauses("V4", "C3")
def test_discard_refunds_a_committed_entry_but_not_a_write_in_flight(fs: FakeFileSystem) -> None:
    ev = make(fs)
    assert write(fs, ev, "a", 10)
    assert ev.reserve("b", 20)
    assert ev.discard("a") and not ev.discard("b") and not ev.discard("zzz")
    assert ev.snapshot() == (("b", 20, True),) and ev.total == 20


@pytest.mark.clauses("V3", "F8")
def test_evict_enforces_the_limits_on_files_found_at_start_up(fs: FakeFileSystem) -> None:
    calls: list[str] = []
    ev = make(fs, calls, max_size=100, eviction_ratio=0.5)
    for key in "abcdef":
        fs.put(path_of(key), b"x" * 20)
        ev.touch(key)
    assert ev.evict()
    assert calls == ["a", "b", "c", "d"] and ev.total == 40


@pytest.mark.clauses("V3", "B2")
def test_a_failing_free_space_probe_refuses_the_write(fs: FakeFileSystem) -> None:
    ev = make(fs, min_free_space=1)
    fs.fail("free", errno.EIO)
    assert not ev.reserve("a", 1)
    assert ev.reserve("a", 1)


@pytest.mark.clauses("B1")
@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"max_size": -1}, ValueError, "max_size"),
        ({"max_size": 1.5}, TypeError, "max_size"),
        ({"min_free_space": -5}, ValueError, "min_free_space"),
        ({"min_free_space": True}, TypeError, "min_free_space"),
        ({"eviction_ratio": 0}, ValueError, "eviction_ratio"),
        ({"eviction_ratio": 1.5}, ValueError, "eviction_ratio"),
        ({"eviction_ratio": float("nan")}, ValueError, "eviction_ratio"),
        ({"eviction_ratio": "0.9"}, TypeError, "eviction_ratio"),
        ({"on_evict": 3}, TypeError, "on_evict"),
    ],
)
def test_bad_evictor_arguments_name_the_parameter(
    fs: FakeFileSystem, kwargs: dict[str, Any], error: type[Exception], name: str
) -> None:
    with pytest.raises(error, match=name):
        LRUFileEvictor(fs, path_of, directory=DIR, **kwargs)


@pytest.mark.clauses("B1")
def test_reserving_a_negative_size_is_a_value_error(fs: FakeFileSystem) -> None:
    with pytest.raises(ValueError, match="size"):
        make(fs).reserve("a", -1)


@pytest.mark.clauses("V4", "C5")
def test_recency_counts_from_publication_not_reservation(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=100)
    assert ev.reserve("first", 10) and ev.reserve("second", 10)
    ev.commit("second")
    ev.commit("first")  # published last: the newest file
    assert keys(ev) == ["second", "first"]


@pytest.mark.clauses("V5", "C5", "C3")
def test_two_writes_of_one_key_keep_it_in_flight_until_the_last_one_commits(fs: FakeFileSystem) -> None:
    ev = make(fs, max_size=6, eviction_ratio=1.0)
    assert ev.reserve("c", 3) and ev.reserve("c", 3)  # two writers of "c" at once: counted once
    assert ev.total == 3
    fs.put(path_of("c"), b"xyz")
    ev.commit("c")  # the first writer is done; the second is still writing
    assert [tuple(e) for e in ev.snapshot()] == [("c", 3, True)]
    assert not ev.reserve("b", 4)  # "c" cannot be a victim while a write of it is in flight (V5)
    assert "c.bin" in fs.listing(DIR)
    ev.commit("c")
    assert [tuple(e) for e in ev.snapshot()] == [("c", 3, False)]
    assert ev.reserve("b", 4) and keys(ev) == ["b"]
    ev.check_invariants()


@pytest.mark.clauses("V4", "C5", "C3")
def test_an_abort_after_another_write_of_the_key_published_it_keeps_the_entry(fs: FakeFileSystem) -> None:
    ev = make(fs)
    assert ev.reserve("c", 3) and ev.reserve("c", 3)
    ev.commit("c")
    ev.abort("c")  # the other write failed, but the file is on disk: still tracked, now committed
    assert [tuple(e) for e in ev.snapshot()] == [("c", 3, False)] and ev.total == 3
    assert ev.reserve("d", 2) and ev.reserve("d", 2)
    ev.abort("d")
    assert [tuple(e) for e in ev.snapshot()][-1] == ("d", 2, True)  # one writer of "d" still runs
    ev.abort("d")  # neither published: the reservation goes
    assert keys(ev) == ["c"] and ev.total == 3
    ev.check_invariants()


@pytest.mark.clauses("V4", "C3")
def test_commit_with_a_size_re_adopts_an_entry_that_vanished(fs: FakeFileSystem) -> None:
    ev = make(fs)
    ev.commit("gone")  # no size: nothing to adopt
    assert len(ev) == 0
    ev.commit("gone", 5)
    assert [tuple(e) for e in ev.snapshot()] == [("gone", 5, False)] and ev.total == 5
    with pytest.raises(ValueError, match="size"):
        ev.commit("x", -1)
    ev.check_invariants()


@pytest.mark.clauses("F4", "C5")
def test_forget_missing_tells_a_miss_older_than_a_publication(fs: FakeFileSystem) -> None:
    ev = make(fs)
    mark = ev.overlaps.publications  # a probe begins
    assert ev.forget_missing("x", mark)  # untracked: the miss stands
    assert write(fs, ev, "c", 3)  # a concurrent set publishes "c"
    assert not ev.forget_missing("c", mark) and "c" in ev  # the probe's miss is older than the file
    assert ev.touch("e", 1) and not ev.forget_missing("e", mark)  # an adoption counts as well
    assert ev.forget_missing("c", ev.overlaps.publications)  # a probe that began afterwards: it stands
    assert "c" not in ev and ev.total == 1
    assert ev.reserve("f", 2) and ev.forget_missing("f", ev.overlaps.publications)
    assert "f" in ev and ev.total == 3  # in flight: its write is still running, the entry stays
    ev.check_invariants()
