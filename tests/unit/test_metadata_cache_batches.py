"""MetadataCache batches (M9) and the recency order (M6-lru), on the fake clock.

A batch must be the single operations applied in order at one instant: the same answers, the same
state, one clock reading and one lock acquisition.  The lock is observed by building the cache while
``threading.Lock`` is a counting wrapper (no test hook in production).  Deliberately wrong batches (a
clock reading per key, a lock per key) are defined here and must fail the same checks.
"""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable, Hashable, Iterable
from types import TracebackType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hicache import HiCacheFile, MetadataCache
from spec.machines.file_store import believed
from spec.models.metadata_cache import MetadataCacheSpec
from spec.world.clock import CountingClock, FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, calls_during, store

TICK = 0.125
KEYS = ("a", "b", "c", "d", "e")


class CountingLock:
    """A ``threading.Lock`` that counts its acquisitions (``with`` or ``acquire``)."""

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()  # not threading.Lock, which is this class while it is built
        self.acquisitions = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        self.acquisitions += 1
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def built_with_counting_lock(make: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``make()`` with ``threading.Lock`` a CountingLock while it runs (restored at once)."""
    with monkeypatch.context() as patch:
        patch.setattr(threading, "Lock", CountingLock)  # what hicache.metadata_cache calls
        return make()


class SteppingClock(CountingClock):
    """spec.world.clock' CountingClock that also steps on after each reading (``step`` seconds)."""

    __slots__ = ("step",)

    def __init__(self, start: float = 100.0) -> None:
        super().__init__(start)
        self.step = 0.0

    def __call__(self) -> float:
        now = super().__call__()
        self.advance(self.step)
        return now


# -- deliberately wrong batches: each must fail at least one check below ----------------------------


class ClockPerKey(MetadataCache):
    """Wrong: one lock, but the clock read for each key (the batch spans several instants)."""

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        with self._lock:
            found = []
            for key in keys:
                birth = self._births.get(key)
                found.append(birth is not None and (self._ttl < 0 or self._clock() - birth <= self._ttl))
            return found


class LockPerKey(MetadataCache):
    """Wrong: the single operations one after another, each taking the lock (and reading the clock)."""

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        return [self.contains(key) for key in keys]

    def add_many(self, keys: Iterable[Hashable]) -> None:
        for key in keys:
            self.add(key)


WRONG = [ClockPerKey, LockPerKey]


def clock_reads_of_contains_many(cls: type[MetadataCache]) -> int:
    clock = SteppingClock()
    cache = cls(10, clock=clock)
    cache.add_many(KEYS)
    clock.reads = 0
    assert cache.contains_many([*KEYS, "absent", *KEYS]) == [True] * 5 + [False] + [True] * 5
    return clock.reads


def answers_on_a_clock_that_steps_per_reading(cls: type[MetadataCache]) -> list[bool]:
    """The keys are born at 100 with TTL 1 and asked at exactly 101 (alive: the boundary is inclusive);
    then every clock reading moves time one tick on, so a second reading in the batch sees them dead."""
    clock = SteppingClock(100.0)
    cache = cls(1, clock=clock)
    cache.add_many(KEYS)
    clock.set(101.0)
    clock.step = TICK
    return cache.contains_many(KEYS)


# -- one clock reading, one lock acquisition --------------------------------------------------------


@pytest.mark.clauses("M9", "M1")
@pytest.mark.parametrize("eviction", ["birth", "lru"])
@pytest.mark.parametrize("ttl", [-1, 10])
def test_each_batch_reads_the_clock_at_most_once(eviction: str, ttl: float) -> None:
    clock = SteppingClock()
    cache = MetadataCache(ttl, max_entries=3, clock=clock, eviction=eviction, stats=True)
    keys = [*KEYS, "a", "b"]
    for name, batch in (
        ("add_many", lambda: cache.add_many(keys)),
        ("contains_many", lambda: cache.contains_many(keys)),
        ("contains_prefix", lambda: cache.contains_prefix(keys)),
        ("remove_many", lambda: cache.remove_many(keys)),
    ):
        clock.reads = 0
        batch()
        assert clock.reads <= 1, f"{name} read the clock {clock.reads} times"


@pytest.mark.clauses("M9")
def test_a_batch_that_reads_the_clock_per_key_is_caught() -> None:
    assert clock_reads_of_contains_many(MetadataCache) == 1
    assert answers_on_a_clock_that_steps_per_reading(MetadataCache) == [True] * 5
    for wrong in WRONG:
        assert clock_reads_of_contains_many(wrong) > 1, wrong.__name__
        assert answers_on_a_clock_that_steps_per_reading(wrong) != [True] * 5, wrong.__name__


def lock_acquisitions(
    cls: type[MetadataCache], monkeypatch: pytest.MonkeyPatch, eviction: str
) -> dict[str, int]:
    cache = built_with_counting_lock(lambda: cls(10, max_entries=4, eviction=eviction), monkeypatch)
    lock = cache._lock
    assert isinstance(lock, CountingLock)
    spent = {}
    batches: tuple[tuple[str, Callable[[], object]], ...] = (
        ("add_many", lambda: cache.add_many(KEYS)),
        ("contains_many", lambda: cache.contains_many(KEYS)),
        ("contains_prefix", lambda: cache.contains_prefix(list(reversed(KEYS)))),
        ("remove_many", lambda: cache.remove_many(KEYS[:2])),
    )
    for name, batch in batches:
        before = lock.acquisitions
        batch()
        spent[name] = lock.acquisitions - before
    return spent


@pytest.mark.clauses("M9", "M7")
@pytest.mark.parametrize("eviction", ["birth", "lru"])
def test_each_batch_takes_the_lock_once(monkeypatch: pytest.MonkeyPatch, eviction: str) -> None:
    spent = lock_acquisitions(MetadataCache, monkeypatch, eviction)
    assert spent == dict.fromkeys(spent, 1)


@pytest.mark.clauses("M9", "M7")
def test_a_batch_that_takes_the_lock_per_key_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    spent = lock_acquisitions(LockPerKey, monkeypatch, "birth")
    assert spent["contains_many"] == len(KEYS) and spent["add_many"] == len(KEYS)


# -- the same answers and state as the single operations in order ------------------------------------

keys_ = st.lists(st.sampled_from(KEYS), max_size=6)
steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["add_many", "contains_many", "contains_prefix", "remove_many"]), keys_),
        st.tuples(st.just("advance"), st.sampled_from([0.0, TICK, 0.5, 1.0, 3.0])),
    ),
    max_size=25,
)


def singles(cache: Any, op: str, keys: list[str]) -> object:
    """The batch ``op`` as single calls in order (on a clock that does not move meanwhile)."""
    if op == "add_many":
        for key in keys:
            cache.add(key)
        return None
    if op == "remove_many":
        for key in keys:
            cache.remove(key)
        return None
    if op == "contains_many":
        return [cache.contains(key) for key in keys]
    count = 0
    for key in keys:
        if not cache.contains(key):
            break
        count += 1
    return count


@pytest.mark.clauses("M9", "M6", "M6-lru", "M8")
@settings(max_examples=300, deadline=None)
@given(
    ttl=st.sampled_from([-1, 0, 1, 2.5]),
    bound=st.sampled_from([None, 1, 2, 3]),
    eviction=st.sampled_from(["birth", "lru"]),
    stats=st.booleans(),
    script=steps,
)
def test_batches_equal_the_single_operations_in_order_at_one_instant(
    ttl: float, bound: int | None, eviction: str, stats: bool, script: list[tuple[str, Any]]
) -> None:
    clock = FakeClock(100.0)
    batched = MetadataCache(ttl, max_entries=bound, clock=clock, eviction=eviction, stats=stats)
    single = MetadataCache(ttl, max_entries=bound, clock=clock, eviction=eviction, stats=stats)
    model = MetadataCacheSpec(ttl, max_entries=bound, clock=clock, eviction=eviction)
    for op, arg in script:
        if op == "advance":
            clock.advance(arg)
            continue
        got = getattr(batched, op)(list(arg))
        assert got == singles(single, op, list(arg)), (op, arg)
        assert got == getattr(model, op)(list(arg)), (op, arg)
        assert batched.snapshot() == single.snapshot() == tuple(model.live().items())
        assert batched.stats() == single.stats()
        if stats:
            got_stats = batched.stats()
            assert (got_stats.hits, got_stats.misses, got_stats.evictions) == (
                model.hits,
                model.misses,
                model.evictions,
            )
        batched.check_invariants()


@pytest.mark.clauses("M9")
def test_contains_prefix_stops_at_the_first_key_that_is_not_live_and_consumes_only_through_it(
    clock: FakeClock,
) -> None:
    cache = MetadataCache(5, clock=clock, stats=True)
    cache.add_many(["a", "b", "d"])
    keys = iter(["a", "b", "c", "d", "e"])
    assert cache.contains_prefix(keys) == 2
    assert list(keys) == ["d", "e"], "the keys after the first miss were not consumed"
    assert cache.stats()[:2] == (2, 1), "two hits and one miss: the keys after the miss are not asked"
    assert cache.contains_prefix([]) == 0
    assert cache.contains_prefix(["a", "b", "d"]) == 3


@pytest.mark.clauses("M9")
def test_batches_take_any_iterable_once(clock: FakeClock) -> None:
    cache = MetadataCache(5, clock=clock)
    cache.add_many(k for k in "abc")
    assert cache.contains_many(iter("abz")) == [True, True, False]
    cache.remove_many(k for k in "ab")
    assert cache.snapshot() == (("c", clock()),)


# -- the recency order (M6-lru) ------------------------------------------------------------------------


@pytest.mark.clauses("M6-lru")
def test_lru_evicts_the_least_recently_used_not_the_oldest_birth(clock: FakeClock) -> None:
    cache = MetadataCache(100, max_entries=2, clock=clock, eviction="lru", stats=True)
    cache.add("a")
    clock.advance(1)
    cache.add("b")
    assert cache.contains("a")  # "a" is now more recent than "b"
    cache.add("c")
    assert cache.contains_many(["a", "b", "c"]) == [True, False, True]
    assert cache.stats().evictions == 1
    birth = MetadataCache(100, max_entries=2, clock=clock)
    birth.add("a")
    clock.advance(1)
    birth.add("b")
    assert birth.contains("a")
    birth.add("c")
    assert birth.contains_many(["a", "b", "c"]) == [False, True, True], "birth order ignores the hit"


@pytest.mark.clauses("M6-lru", "M3")
@pytest.mark.parametrize("ask", ["contains", "contains_many", "contains_prefix"])
def test_an_lru_hit_never_extends_a_life(clock: FakeClock, ask: str) -> None:
    cache = MetadataCache(5, clock=clock, eviction="lru")
    cache.add("k")
    for _ in range(4):
        clock.advance(1)
        assert cache.contains("k") if ask == "contains" else getattr(cache, ask)(["k"]) in ([True], 1)
    clock.advance(1)
    assert cache.contains("k"), "5 s after its birth: the inclusive boundary"
    assert cache.snapshot() == (("k", 100.0),), "the birth stayed"
    clock.advance(TICK)
    assert not cache.contains("k") and cache.contains_many(["k"]) == [False]
    assert len(cache) == 0


@pytest.mark.clauses("M6-lru", "M3")
def test_an_lru_re_add_of_a_live_key_changes_neither_its_life_nor_its_recency(clock: FakeClock) -> None:
    cache = MetadataCache(10, max_entries=2, clock=clock, eviction="lru")
    cache.add_many(["a", "b"])
    clock.advance(1)
    cache.add("a")
    cache.add("c")  # "a" is still the least recently used
    assert cache.snapshot() == (("b", 100.0), ("c", 101.0))


@pytest.mark.clauses("M6-lru", "M6")
def test_a_full_lru_cache_drops_expired_entries_before_the_least_recently_used(clock: FakeClock) -> None:
    cache = MetadataCache(5, max_entries=2, clock=clock, eviction="lru", stats=True)
    cache.add("old")
    clock.advance(3)
    cache.add("young")
    assert cache.contains("old")  # "old" becomes the most recent, but its life runs out first
    clock.advance(3)  # "old" expired; "young" is the least recently used and alive
    cache.add("new")
    assert cache.contains_many(["old", "young", "new"]) == [False, True, True]
    assert cache.stats().evictions == 0 and cache.stats().expirations == 1
    cache.check_invariants()


@pytest.mark.clauses("M6-lru", "M6")
def test_lru_reclaims_expired_keys_by_birth_whatever_their_recency(clock: FakeClock) -> None:
    cache = MetadataCache(1, clock=clock, eviction="lru")
    for round_ in range(50):
        cache.add_many((round_, i) for i in range(20))
        cache.contains_many([(round_, i) for i in reversed(range(20))])  # recency against birth order
        clock.advance(2)
    cache.add("last")
    cache.check_invariants()
    assert (
        cache._births.keys() == {"last"} and cache._recency is not None and cache._recency.keys() == {"last"}
    )


@pytest.mark.clauses("M6-lru")
def test_lru_snapshot_lists_the_least_recently_used_first(clock: FakeClock) -> None:
    cache = MetadataCache(-1, clock=clock, eviction="lru")
    cache.add_many(["a", "b", "c"])
    cache.contains_many(["b", "a"])
    assert [k for k, _ in cache.snapshot()] == ["c", "b", "a"]
    cache.contains_prefix(["c", "zz", "b"])
    assert [k for k, _ in cache.snapshot()] == ["b", "a", "c"]
    cache.remove_many(["a"])
    assert [k for k, _ in cache.snapshot()] == ["b", "c"]
    cache.clear()
    assert cache.snapshot() == ()
    cache.check_invariants()


@pytest.mark.clauses("M6-lru")
def test_check_invariants_reports_recency_out_of_step_with_births(clock: FakeClock) -> None:
    cache = MetadataCache(10, clock=clock, eviction="lru")
    cache.add("a")
    assert cache._recency is not None
    cache._recency["ghost"] = 100.0  # corrupt: recency knows a key the births do not
    with pytest.raises(AssertionError, match=r"^recency and births disagree$"):
        cache.check_invariants()


@pytest.mark.clauses("M6-lru", "M8")
def test_lru_with_counters_answers_as_without(clock: FakeClock) -> None:
    for stats in (False, True):
        cache = MetadataCache(-1, max_entries=2, clock=clock, eviction="lru", stats=stats)
        cache.add_many(["a", "b"])
        assert cache.contains("a")
        cache.add("c")
        assert [cache.contains(k) for k in "abc"] == [True, False, True], stats


# -- validation ----------------------------------------------------------------------------------------


@pytest.mark.clauses("M1", "B1")
@pytest.mark.parametrize(
    ("value", "error"),
    [("LRU", ValueError), ("fifo", ValueError), ("", ValueError), (None, TypeError), (1, TypeError)],
)
def test_an_invalid_eviction_is_rejected_naming_the_parameter(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"^eviction must be") as info:
        MetadataCache(5, eviction=value)
    assert repr(value) in str(info.value)


@pytest.mark.clauses("M1")
def test_the_eviction_order_defaults_to_birth() -> None:
    assert MetadataCache(5).eviction == "birth"
    assert MetadataCache(5, eviction="lru").eviction == "lru"


# -- the file store uses the batches -------------------------------------------------------------------


@pytest.mark.clauses("F5", "F6", "M9")
def test_batch_exists_answers_a_believed_chain_under_one_acquisition_with_no_filesystem_call(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = built_with_counting_lock(lambda: store(fs, clock, enable_metadata_cache=True), monkeypatch)
    keys = [f"k{i}" for i in range(64)]
    assert s.batch_set(keys, [b"v"] * 64) == [True] * 64
    lock = s._beliefs._lock
    assert isinstance(lock, CountingLock)
    before = lock.acquisitions
    answer, spent = calls_during(fs, lambda: s.batch_exists(keys))
    assert (answer, spent, lock.acquisitions - before) == (64, {}, 1)


@pytest.mark.clauses("F5", "F6", "M9")
def test_batch_exists_sends_only_each_first_unbelieved_key_to_the_filesystem(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True)
    assert s.batch_set(["a", "b", "d", "e"], [b"v"] * 4) == [True] * 4
    fs.put(f"{DIR}/c{NS}.bin", b"v")  # on disk, written behind the store's back: not believed
    answer, spent = calls_during(fs, lambda: s.batch_exists(["a", "b", "c", "d", "e", "f", "a"]))
    assert answer == 5
    assert spent == {"stat": 2}, "c (found, now believed) and f (missing): nothing else"
    assert "c" in believed(s)
    answer, spent = calls_during(fs, lambda: s.batch_exists(["a", "b", "c", "d", "e"]))
    assert (answer, spent) == (5, {})


@pytest.mark.clauses("F4", "F5", "M9")
def test_batch_get_teaches_what_it_read_in_one_acquisition(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = built_with_counting_lock(lambda: store(fs, clock, enable_metadata_cache=True), monkeypatch)
    for key in "abc":
        fs.put(f"{DIR}/{key}{NS}.bin", key.encode())
    lock = s._beliefs._lock
    before = lock.acquisitions
    assert s.batch_get(["a", "b", "c"]) == [b"a", b"b", b"c"]
    assert lock.acquisitions - before == 1
    assert all(k in believed(s) for k in "abc") and s.evictor.total == 3
    s.check_invariants()


@pytest.mark.clauses("F4", "F5", "C3")
def test_batch_get_forgets_a_vanished_key_after_what_it_read_before(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """batch_get([k, gone, k]) where ``k`` is read, then vanishes, then is missed: the lessons of the
    first read are applied before the miss forgets it, as single gets in order would."""
    s = store(fs, clock, enable_metadata_cache=True)
    assert s.set("k", b"v") and s.set("gone", b"w")
    fs.remove(f"{DIR}/gone{NS}.bin")
    real_read = fs.read_file
    reads: list[str] = []

    def read_then_vanish(path: str, *args: Any) -> Any:
        reads.append(path)
        answer = real_read(path, *args)
        if len(reads) == 1:
            fs.remove(path)  # "k" vanishes right after its first read
        return answer

    fs.read_file = read_then_vanish  # type: ignore[method-assign,assignment]
    assert s.batch_get(["k", "gone", "k"]) == [b"v", None, None]
    assert "k" not in believed(s) and "gone" not in believed(s)
    assert "k" not in s.evictor and "gone" not in s.evictor
    s.check_invariants()


@pytest.mark.clauses("F2", "F5", "B1")
@pytest.mark.parametrize(
    "bad",
    [7, None, "", ".hidden", "a/b", "a\0b", "x" * 300, "é" * 200, "\udcc3"],
    ids=["int", "None", "empty", "dot", "slash", "nul", "long", "long-utf8", "surrogate"],
)
@pytest.mark.parametrize("at", [0, 3])
def test_a_bad_key_anywhere_in_a_batch_raises_as_its_single_check(
    fs: FakeFileSystem, clock: FakeClock, bad: Any, at: int
) -> None:
    s = store(fs, clock, enable_metadata_cache=True)
    with pytest.raises((TypeError, ValueError)) as single:
        s.file_name(bad)
    keys = ["a", "b", "c", "d"]
    keys.insert(at, bad)
    for batch in (s.batch_exists, s.batch_get):
        with pytest.raises(type(single.value)) as got:
            calls_during(fs, lambda: batch(keys))  # noqa: B023
        assert str(got.value) == str(single.value)
    before = dict(fs.calls)
    with pytest.raises(type(single.value)):
        s.batch_exists(keys)
    assert dict(fs.calls) == before, "no I/O before the check"


@pytest.mark.clauses("F2", "F5")
def test_valid_keys_the_joined_check_leaves_to_the_single_one_are_accepted(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock)
    keys = ["é" * 60, "x" * 80, "a.b", "%_"]  # not ASCII; long enough to need the exact count; dots inside
    assert s.batch_set(keys, [b"v"] * 4) == [True] * 4
    assert s.batch_exists(keys) == 4


@pytest.mark.clauses("F9", "M6-lru")
def test_the_metadata_eviction_setting_reaches_the_metadata_cache(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    birth = store(fs, clock, enable_metadata_cache=True)._beliefs
    assert birth is not None and birth.eviction == "birth"
    lru = HiCacheFile(
        DIR + "2",
        extra_config={"enable_metadata_cache": True, "metadata_eviction": "lru"},
        fs=fs,
        clock=clock,
    )
    assert lru._beliefs is not None and lru._beliefs.eviction == "lru"


@pytest.mark.clauses("F9", "M6-lru")
def test_reading_the_beliefs_leaves_the_recency_order_alone_under_lru(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_eviction="lru")
    assert s.batch_set(["a", "b"], [b"v", b"v"]) == [True, True]
    assert s._beliefs is not None
    order = s._beliefs.snapshot()
    assert "a" in believed(s) and "b" in believed(s) and "c" not in believed(s)
    assert s._beliefs.snapshot() == order
