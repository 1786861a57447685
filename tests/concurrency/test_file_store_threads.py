"""The C1 race reproduced deterministically, and real threads hammering one store (C1, C3, C5).

The race: a probe (``exists`` or ``get``) sees the file, then the store removes
it (eviction, ``delete``, ``clear``), then the probe would teach the belief: a
stale positive this store inflicted on itself.  The fake filesystem's hooks
pause a thread at an exact point, so both orders are reproduced without
sleeping:

* probe first: the probe's filesystem call has returned, the removal runs to
  completion, then the probe finishes;
* removal first: the eviction has dropped the belief (``on_evict``) but not yet
  unlinked the file when the whole probe runs (reentrantly, in the unlink hook).

Each is run on the production store, which must hold C1, and on ``NoC1Guard``
(spec/variants/file_store.py), which must break it: the test can fail.
"""

from __future__ import annotations

import copy
import errno
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hicache import HiCacheFile
from hicache.file_evictor import LRUFileEvictor
from hicache.fs import FileSystem, OSFileSystem
from spec.machines.file_store import believed
from spec.models.file_store import FileStoreModel
from spec.variants.file_store import NoC1Guard
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

DIR = "/cache"
IMPLEMENTATIONS: dict[str, tuple[type[HiCacheFile], bool]] = {
    "production": (HiCacheFile, True),
    "variant without the C1 guard": (NoC1Guard, False),
}
SAFETY_TIMEOUT = 120.0  # only ever reached if the test is broken: every wait is released explicitly


def build(kind: type[HiCacheFile], fs: FakeFileSystem, clock: FakeClock, ttl: float = -1) -> HiCacheFile:
    config = {"max_size": 10, "eviction_ratio": 1.0, "enable_metadata_cache": True, "metadata_ttl": ttl}
    return kind(DIR, extra_config=config, fs=fs, clock=clock)


def path(key: str) -> str:
    return f"{DIR}/{key}.bin"


def remove_by(store: HiCacheFile, removal: str) -> None:
    if removal == "eviction":
        assert store.set("other", b"x" * 10)  # the cap is 10: "victim" must go
    elif removal == "delete":
        assert store.delete("victim")
    else:
        assert store.clear()


@pytest.mark.clauses("C1", "V6", "C5")
@pytest.mark.parametrize("probe", ["exists", "get"])
@pytest.mark.parametrize("removal", ["eviction", "delete", "clear"])
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_a_probe_that_saw_the_file_before_the_removal_plants_no_belief_after_it(
    clock: FakeClock, name: str, removal: str, probe: str
) -> None:
    kind, holds = IMPLEMENTATIONS[name]
    fs = FakeFileSystem(clock)
    store = build(kind, fs, clock, ttl=0)  # beliefs live for one instant of the fake clock
    assert store.set("victim", b"12345")
    clock.advance(1)  # tracked, but unbelieved: the probe must go to the filesystem
    assert "victim" not in believed(store)

    probe_op = "stat" if probe == "exists" else "read"
    saw_file, resume = threading.Event(), threading.Event()
    answers: list[object] = []

    def pause_the_probe(op: str, where: str) -> None:
        if op == probe_op and where == path("victim") and threading.current_thread() is prober:
            saw_file.set()
            assert resume.wait(SAFETY_TIMEOUT)

    def run_probe() -> None:
        answers.append(getattr(store, probe)("victim"))

    fs.after = pause_the_probe
    prober = threading.Thread(target=run_probe)
    prober.start()
    assert saw_file.wait(SAFETY_TIMEOUT)
    remove_by(store, removal)  # runs to completion while the probe is paused
    resume.set()
    prober.join(SAFETY_TIMEOUT)
    fs.after = None

    assert answers[0] in (True, b"12345"), "the probe linearizes before the removal"
    assert not fs.remove(path("victim")), "the removal did remove the file"
    stale = store.exists("victim")
    assert stale is not holds, f"{name}: exists after {removal} -> {stale}"
    if holds:
        store.check_invariants()


@pytest.mark.clauses("C1", "V6")
@pytest.mark.parametrize("probe", ["exists", "get"])
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_a_probe_between_the_eviction_callback_and_the_unlink_plants_no_belief(
    clock: FakeClock, name: str, probe: str
) -> None:
    kind, holds = IMPLEMENTATIONS[name]
    fs = FakeFileSystem(clock)
    store = build(kind, fs, clock)
    assert store.set("victim", b"12345")
    during: list[object] = []

    def probe_before_the_unlink(op: str, where: str) -> None:
        if op == "unlink" and where == path("victim") and not during:
            assert "victim" not in believed(store), "V6: the belief goes before the file"
            during.append(getattr(store, probe)("victim"))  # the file is still there

    fs.before = probe_before_the_unlink
    assert store.set("other", b"x" * 10)  # evicts "victim"
    fs.before = None

    assert during and during[0] in (True, b"12345")
    assert "victim.bin" not in fs.listing(DIR)
    stale = store.exists("victim")
    assert stale is not holds, f"{name}: exists after the eviction -> {stale}"


# -- real threads -----------------------------------------------------------------

THREADS = 6
ROUNDS = 1500
KEYS = [f"k{i}" for i in range(12)]


@pytest.fixture
def _switch_threads_often() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def hammer(store: HiCacheFile, seed: int, errors: list[BaseException]) -> None:
    try:
        for i in range(ROUNDS):
            key = KEYS[(seed * 5 + i * 7) % len(KEYS)]
            op = (i * 13 + seed) % 9
            if op <= 1:
                store.set(key, key.encode() * (1 + i % 4))
            elif op == 2:
                value = store.get(key)
                assert value is None or value == key.encode() * (len(value) // len(key)), "torn value"
            elif op == 3:
                store.exists(key)
            elif op == 4:
                store.delete(key)
            elif op == 5:
                store.batch_exists(KEYS[: 1 + i % 5])
            elif op == 6:
                other = KEYS[(i + 1) % len(KEYS)]
                store.batch_set([key, other], [key.encode() * 2, other.encode()])
            elif op == 7:
                buffer = bytearray(len(key) * 2)
                store.get_into(key, buffer)
            elif i % 50 == 0:
                store.clear()
            else:
                store.batch_get(KEYS[: 1 + i % 3])
    except BaseException as exc:  # a thread's failure must reach the test
        errors.append(exc)


class _CountingEvictor(LRUFileEvictor):
    """Counts the eviction callbacks (V6)."""

    evictions = 0

    def __init__(self, *args: Any, on_evict: Callable[[str], object] | None = None, **kwargs: Any) -> None:
        def counted(key: str) -> None:
            self.evictions += 1  # under the store's lock, as every on_evict call is
            if on_evict is not None:
                on_evict(key)  # the beliefs' remove

        super().__init__(*args, on_evict=counted, **kwargs)


class CountingStore(HiCacheFile):
    """Counts the eviction callbacks (V6), so that a hammering test can show eviction happened."""

    evictor_class = _CountingEvictor

    @property
    def evictions(self) -> int:
        """The eviction callbacks so far."""
        evictor = self.evictor
        assert isinstance(evictor, _CountingEvictor)
        return evictor.evictions


def believed_files_exist(store: HiCacheFile, exists: Callable[[str], bool]) -> list[str]:
    return [k for k in KEYS if k in believed(store) and not exists(k)]


class _HookedOSFileSystem(OSFileSystem):
    """The OS port with the fake's ``before(op, path)`` hook on ``write_new`` (op ``"write"``)."""

    __slots__ = ("before",)

    def __init__(self) -> None:
        self.before: Callable[[str, str], None] | None = None

    def write_new(self, path: str, data: memoryview, mode: int = 0o600) -> None:
        if self.before is not None:
            self.before("write", path)
        super().write_new(path, data, mode)


# The burst that makes eviction run among the threads by construction (see the test below).
HELD_VALUE = b"hd"  # thread 0's write, held in flight (reserved, never a victim: V5) during the bursts
FILLS, FILL_SIZE = 7, 10  # each other thread: 7 new keys of 10 bytes, 70 bytes alone, over the cap of 60


@pytest.mark.threads
@pytest.mark.usefixtures("_switch_threads_often")
@pytest.mark.clauses("C5", "C3", "C1", "V5")
@pytest.mark.parametrize("filesystem", ["fake", "os"])
def test_threads_hammering_one_store_keep_accounting_exact_and_no_stale_beliefs(
    tmp_path: Path, filesystem: str
) -> None:
    hammer_one_store(tmp_path, filesystem, THREADS)


@pytest.mark.threads
@pytest.mark.clauses("C5")
def test_the_hammering_test_fails_when_no_other_thread_runs(tmp_path: Path) -> None:
    """The eviction assertion is not vacuous: thread 0 alone (no bursts, no other thread) never evicts."""
    with pytest.raises(AssertionError, match="eviction ran while thread 0's write was in flight"):
        hammer_one_store(tmp_path, "fake", 1)


def hammer_one_store(tmp_path: Path, filesystem: str, threads: int) -> None:
    """Eviction among the threads, by construction rather than by speed: thread 0's first ``set`` is held
    inside its write (reserved, in flight) while every other thread writes a burst of new keys, then all
    hammer freely.  In the burst nothing removes a file but eviction, each bursting thread alone writes
    more than the cap, and no burst write can be refused (the writes in flight hold at most 2 + 4 x 10
    bytes, so 10 more always fit in 60): so under every interleaving eviction runs, while another
    thread's write is in flight.  With one thread (no bursts) the eviction assertions fail."""
    fs: FileSystem
    hooked: FakeFileSystem | _HookedOSFileSystem
    if filesystem == "fake":
        fake = FakeFileSystem(FakeClock(100.0))
        fs, directory, hooked = fake, DIR, fake

        def on_disk(key: str) -> bool:
            return f"{key}.bin" in fake.listing(DIR)

    else:
        hooked_os = _HookedOSFileSystem()
        fs, directory, hooked = hooked_os, str(tmp_path / "store"), hooked_os

        def on_disk(key: str) -> bool:
            return os.path.exists(os.path.join(directory, f"{key}.bin"))

    config = {"max_size": 60, "eviction_ratio": 0.7, "enable_metadata_cache": True, "metadata_ttl": -1}
    store = CountingStore(directory, extra_config=config, fs=fs)
    errors: list[BaseException] = []
    held, bursts_done = threading.Event(), threading.Barrier(threads, timeout=SAFETY_TIMEOUT)
    at_release: list[tuple[int, bool]] = []  # (evictions, the held write still tracked) when it resumed

    def hold_the_first_write(op: str, where: str) -> None:
        if op == "write" and threading.current_thread() is workers[0] and not held.is_set():
            held.set()
            bursts_done.wait()  # the other threads' bursts run while this write is in flight
            at_release.append((store.evictions, "held" in store.evictor))

    def work(seed: int) -> None:
        try:
            if seed == 0:
                assert store.set("held", HELD_VALUE)  # held in its write until the bursts are done
            else:
                assert held.wait(SAFETY_TIMEOUT), "thread 0 never reached its write"
                for j in range(FILLS):
                    assert store.set(f"fill{seed}-{j}", bytes(FILL_SIZE)), "a burst write was refused"
                bursts_done.wait()
        except BaseException as exc:  # a thread's failure must reach the test, and wake the others
            errors.append(exc)
            bursts_done.abort()
            held.set()
            return
        hammer(store, seed, errors)

    hooked.before = hold_the_first_write
    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    hooked.before = None
    assert errors == []
    assert at_release and at_release[0][0] > 0, "eviction ran while thread 0's write was in flight"
    assert at_release[0][1], "V5: the write in flight was never a victim"
    assert store.evictions > 0, "the threads wrote past the cap, so eviction ran among them"
    store.check_invariants()  # C3: total == sum of tracked sizes; no removal left half done
    assert believed_files_exist(store, on_disk) == [], "C1: a belief outlived its file"
    assert store.evictor.total <= 60 + 8 * THREADS, "the cap holds up to the writes in flight"
    restarted = HiCacheFile(directory, extra_config=config, fs=fs)
    names = [e.name for e in fs.scandir(directory)]
    assert not [n for n in names if n.endswith(".tmp")], "every temp file was published or removed"
    assert restarted.evictor.total == sum(e.size for e in fs.scandir(directory)), "C3 after a restart"


@pytest.mark.threads
@pytest.mark.usefixtures("_switch_threads_often")
@pytest.mark.clauses("C5", "V5", "C3")
def test_threads_writing_past_an_unremovable_file_never_wedge(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock)
    store = build(HiCacheFile, fs, clock)
    assert store.set("stuck", b"12")
    fs.fail_unlink(path("stuck"), errno.EPERM)
    errors: list[BaseException] = []
    threads = [threading.Thread(target=hammer, args=(store, seed, errors)) for seed in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store.check_invariants()
    assert "stuck.bin" in fs.listing(DIR)


# -- C5: linearizability against the model ------------------------------------------

LIN_KEYS = ("a", "b", "c")
LIN_VALUES = (b"1234", b"56789", b"xy")
Call = tuple[str, tuple[object, ...]]


def lin_program(seed: int, length: int) -> list[Call]:
    """A thread's calls, chosen from the seed (the interleaving is left to the scheduler)."""
    calls: list[Call] = []
    for i in range(length):
        key = LIN_KEYS[(seed * 7 + i * 5) % len(LIN_KEYS)]
        op = (seed * 3 + i * 11) % 5
        if op == 0:
            calls.append(("set", (key, LIN_VALUES[(seed + i) % len(LIN_VALUES)])))
        elif op == 1:
            calls.append(("get", (key,)))
        elif op == 2:
            calls.append(("exists", (key,)))
        elif op == 3:
            calls.append(("delete", (key,)))
        else:
            calls.append(("batch_exists", (list(LIN_KEYS[: 1 + i % 3]),)))
    return calls


Event = tuple[int, int, int, str, tuple[object, ...], object]  # thread, invoked, returned, op, args, answer


def linearizes(history: list[Event], model: FileStoreModel) -> bool:
    """True when some order of the calls that respects real time gives the same answers on the model."""
    remaining = sorted(history, key=lambda e: e[1])

    def search(model: FileStoreModel, remaining: list[Event]) -> bool:
        if not remaining:
            return True
        first_return = min(e[2] for e in remaining)
        for event in remaining:
            if event[1] > first_return:
                break  # invoked after some pending call returned: that call must come first
            trial = copy.deepcopy(model)
            if getattr(trial, event[3])(*event[4]) == event[5] and search(
                trial, [e for e in remaining if e is not event]
            ):
                return True
        return False

    return search(model, remaining)


def lin_model(metadata: bool, clock: FakeClock) -> FileStoreModel:
    return FileStoreModel(
        namespace="",
        cap=10,
        ratio=1.0,
        min_free=0,
        disk_size=1 << 50,
        metadata=metadata,
        ttl=-1,
        temp_max_age=3600.0,
        clock=clock,
    )


def lin_trial(trial: int, metadata: bool) -> tuple[list[Event], FileStoreModel, HiCacheFile]:
    """Three threads run three calls each on a fresh store; the history of what happened.

    The threads' first calls meet inside their intervals (invoked, then a barrier,
    then the call), so those three overlap by construction however fast the
    threads run; the other calls run free.
    """
    clock = FakeClock(100.0)
    config = {"max_size": 10, "eviction_ratio": 1.0, "enable_metadata_cache": metadata, "metadata_ttl": -1}
    store = HiCacheFile(DIR, extra_config=config, fs=FakeFileSystem(clock), clock=clock)
    ticks = itertools.count()
    history: list[Event] = []
    meet = threading.Barrier(3, timeout=SAFETY_TIMEOUT)

    def run(thread: int) -> None:
        for n, (op, args) in enumerate(lin_program(trial * 3 + thread, 3)):
            invoked = next(ticks)
            if n == 0:
                meet.wait()  # every thread's first call is invoked before any of them runs
            answer = getattr(store, op)(*args)
            history.append((thread, invoked, next(ticks), op, args, answer))

    threads = [threading.Thread(target=run, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return history, lin_model(metadata, clock), store


@pytest.mark.threads
@pytest.mark.usefixtures("_switch_threads_often")
@pytest.mark.clauses("C5", "C1")
@pytest.mark.parametrize("metadata", [True, False])
def test_concurrent_calls_are_linearizable_against_the_model(metadata: bool) -> None:
    for trial in range(60):
        history, model, store = lin_trial(trial, metadata)
        assert overlapping_calls(history) >= 3, f"trial {trial}: the threads' first calls did not overlap"
        assert linearizes(history, model), f"trial {trial}: no sequential order explains {sorted(history)}"
        store.check_invariants()


def overlapping_calls(history: list[Event]) -> int:
    """How many calls overlap (in ticks) a call of another thread."""
    return sum(any(o[0] != e[0] and o[1] < e[2] and e[1] < o[2] for o in history) for e in history)


@pytest.mark.clauses("C5")
def test_the_linearizability_check_rejects_an_impossible_history(clock: FakeClock) -> None:
    possible: list[Event] = [(0, 0, 1, "set", ("a", b"1234"), True), (1, 2, 3, "get", ("a",), b"1234")]
    impossible: list[Event] = [(0, 0, 1, "set", ("a", b"1234"), True), (1, 2, 3, "get", ("a",), None)]
    overlapping: list[Event] = [(0, 0, 3, "set", ("a", b"1234"), True), (1, 1, 2, "get", ("a",), None)]
    assert linearizes(possible, lin_model(True, clock))
    assert not linearizes(impossible, lin_model(True, clock))
    assert overlapping_calls(possible) == 0 and overlapping_calls(overlapping) == 2
    assert linearizes(overlapping, lin_model(True, clock)), "the get may take effect before the set"
