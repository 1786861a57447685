"""MetadataCache histories (M7): the sequential spec, the object under test, workloads, a racy variant.

The object under test is the cache *and* its clock: ``advance(delta)`` is an
operation of the history like any other, so expiry races are covered too.
The implementation reads the clock once, inside its lock, so each call takes
effect at that instant, inside its interval: the pair is linearizable.

``RacyMetadataCache`` is DELIBERATELY WRONG and kept so that the checker is
shown to fail: its ``add`` checks liveness in one critical section and acts in
another, with a scheduling point between them, so a key another thread added
meanwhile gets its lifetime restarted (M3) and moved to the newest end (M6).
The scheduling point is a :func:`~spec.linearizability.checker.meeting_point`:
in the real-thread batches the leader of each meeting holds there while the
other threads make their calls, so the race window is open by construction,
not only when the scheduler happens to switch threads there.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hicache.metadata_cache import MetadataCache
from spec import metadata_cache as model
from spec.fakes import FakeClock
from spec.linearizability.checker import (
    MAX_STEPS,
    SAFETY_TIMEOUT,
    HistoryRecorder,
    Operation,
    Verdict,
    check_history,
    meeting_point,
    meetings_of,
    run_threads,
)

__all__ = [
    "MEET_EVERY",
    "ClockedCache",
    "MetadataCacheHistorySpec",
    "RacyMetadataCache",
    "RunSummary",
    "ScheduledMetadataCache",
    "check_real_thread_histories",
    "forced_racy_history",
    "overlapping",
    "random_scripts",
    "switch_often",
]

State = tuple[tuple[tuple[Hashable, float], ...], float]  # (live births in birth order, now)
Script = list[tuple[str, tuple[Hashable, ...]]]
START = 1000.0


class MetadataCacheHistorySpec:
    """``spec.metadata_cache`` as a step function over hashable states (dead entries dropped)."""

    def __init__(self, ttl: float, max_entries: int | None, start: float = START) -> None:
        self.ttl, self.max_entries = ttl, max_entries
        self.initial: State = ((), start)

    def step(self, state: State, name: str, args: tuple[Hashable, ...]) -> tuple[State, Any]:
        items, now = state
        births = dict(items)
        answer: Any = None
        if name == "advance":
            assert isinstance(args[0], float)
            now += args[0]
        elif name == "add":
            births, _ = model.add(births, args[0], now, self.ttl, self.max_entries)
        elif name == "contains":
            answer = model.contains(births, args[0], now, self.ttl)
        elif name == "remove":
            births = model.remove(births, args[0])
        elif name == "clear":
            births = {}
        elif name == "len":
            answer = len(model.live_keys(births, now, self.ttl))
        else:
            raise ValueError(f"unknown operation {name!r}")
        live = tuple((k, b) for k, b in births.items() if model.is_live(b, now, self.ttl))
        return (live, now), answer


class ClockedCache:
    """The object under test: a cache and the FakeClock it reads, as one set of operations."""

    def __init__(self, cache: Any, clock: FakeClock) -> None:
        self.cache, self.clock = cache, clock
        self.add, self.contains, self.remove, self.clear = (
            cache.add,
            cache.contains,
            cache.remove,
            cache.clear,
        )

    def len(self) -> int:
        return len(self.cache)

    def advance(self, delta: float) -> None:
        self.clock.advance(delta)  # one advancing thread per history: the += is not shared


MEET_EVERY = 4  # the threads meet at calls 0, 4, 8, ... of their scripts (Rendezvous); free in between


def _yield() -> None:
    meeting_point()  # the leader of a meeting holds here while the other threads make their calls
    time.sleep(0)  # releases the GIL: another thread may run at this point


class RacyMetadataCache(MetadataCache):
    """DELIBERATELY WRONG (M7): ``add`` is check-then-act across two critical sections."""

    def __init__(self, ttl: float, *, schedule_point: Callable[[], None] = _yield, **kwargs: Any) -> None:
        super().__init__(ttl, **kwargs)
        self._schedule_point = schedule_point

    def add(self, key: Hashable) -> None:
        with self._lock:
            self._reclaim(self._clock())
            known = key in self._births
        self._schedule_point()  # the race window: another thread may add `key` now
        if known:
            return
        with self._lock:
            births = self._births
            births.pop(key, None)  # acting on a stale check: restarts a lifetime that just began
            if self._max_entries is not None and len(births) >= self._max_entries:
                births.popitem(last=False)
                self._evictions += 1
            births[key] = self._clock()


class ScheduledMetadataCache(MetadataCache):
    """The control: the same scheduling point, placed before production's atomic ``add``."""

    def __init__(self, ttl: float, *, schedule_point: Callable[[], None] = _yield, **kwargs: Any) -> None:
        super().__init__(ttl, **kwargs)
        self._schedule_point = schedule_point

    def add(self, key: Hashable) -> None:
        self._schedule_point()
        super().add(key)


def forced_racy_history(factory: Callable[..., Any]) -> list[Operation]:
    """The bad interleaving, forced with events: thread 0 is held at the scheduling point of its add.

    Thread 0: ``add(a)``, held after its check.  Thread 1 meanwhile: ``add(a)``,
    ``add(b)``; then thread 0 finishes; then thread 1: ``add(c)``, ``contains(a)``,
    ``contains(b)``.  With bound 2 and TTL -1 every order the spec allows ends with
    ``a`` evicted by ``c``; the racy cache restarted ``a`` and evicts ``b`` instead.
    """
    checked, resume = threading.Event(), threading.Event()

    def hold() -> None:
        if threading.current_thread() is not threading.main_thread():
            checked.set()
            assert resume.wait(timeout=SAFETY_TIMEOUT), "the main thread never resumed the held add"

    clock = FakeClock(START)
    target = ClockedCache(factory(-1, max_entries=2, clock=clock, schedule_point=hold), clock)
    recorder = HistoryRecorder()
    worker = threading.Thread(target=recorder.perform, args=(0, target, "add", "a"))
    worker.start()
    assert checked.wait(timeout=SAFETY_TIMEOUT), "thread 0 never reached its scheduling point"
    recorder.perform(1, target, "add", "a")
    recorder.perform(1, target, "add", "b")
    resume.set()
    worker.join()
    for name, key in (("add", "c"), ("contains", "a"), ("contains", "b")):
        recorder.perform(1, target, name, key)
    return recorder.operations


def random_scripts(
    rng: random.Random, threads: int, length: int, keys: Sequence[str], tick: float | None
) -> list[Script]:
    """One script per thread: mostly add/contains on a few keys; thread 0 also moves the clock."""
    scripts: list[Script] = []
    for thread in range(threads):
        script: Script = []
        for _ in range(length):
            roll = rng.random()
            key = rng.choice(keys)
            if tick is not None and thread == 0 and roll < 0.15:
                script.append(("advance", (tick,)))
            elif roll < 0.55:
                script.append(("add", (key,)))
            elif roll < 0.9:
                script.append(("contains", (key,)))
            elif roll < 0.96:
                script.append(("remove", (key,)))
            else:
                script.append(("len", ()))
        scripts.append(script)
    return scripts


@dataclass
class RunSummary:
    """Figures of a batch of real-thread histories."""

    histories: int = 0
    operations: int = 0
    overlapping: int = 0  # operations whose interval overlaps another thread's operation
    meetings: int = 0  # rendezvous meetings (each makes calls of different threads overlap)
    linearizable: int = 0
    violations: int = 0
    unknown: int = 0
    seconds: float = 0.0
    first_violation: Verdict | None = None

    def record(self, history: Sequence[Operation], verdict: Verdict, meetings: int = 0) -> None:
        """Count one checked history and its verdict (the first violation is kept as the example)."""
        self.histories += 1
        self.meetings += meetings
        self.operations += len(history)
        self.overlapping += overlapping(history)
        if verdict.linearizable is None:
            self.unknown += 1
        elif verdict.linearizable:
            self.linearizable += 1
        else:
            self.violations += 1
            if self.first_violation is None:
                self.first_violation = verdict

    def line(self) -> str:
        return (
            f"{self.histories} histories, {self.operations} operations"
            f" ({self.overlapping} overlapping, {self.meetings} meetings):"
            f" {self.linearizable} linearizable,"
            f" {self.violations} NOT linearizable, {self.unknown} unknown ({self.seconds:.1f}s)"
        )


def overlapping(history: Sequence[Operation]) -> int:
    """How many operations overlap in time with an operation of another thread.  O(n log n + overlaps)."""
    ordered = sorted(history, key=lambda op: op.call)
    marked: set[int] = set()
    for i, op in enumerate(ordered):
        for other in ordered[i + 1 :]:
            if other.call > op.ret:
                break
            if other.thread != op.thread:
                marked.update((id(op), id(other)))
    return len(marked)


@contextmanager
def switch_often(interval: float) -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(interval)  # many more thread switches, so more overlapping intervals
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def check_real_thread_histories(
    factory: Callable[..., Any],
    *,
    histories: int,
    seed: int = 0,
    threads: int = 3,
    length: int = 25,
    ttl: float = 1.0,
    max_entries: int | None = 2,
    keys: Sequence[str] = ("a", "b", "c"),
    max_steps: int = MAX_STEPS,
    meet_every: int | None = MEET_EVERY,
    switch_interval: float = 1e-6,
    stop_at_first_violation: bool = False,
) -> RunSummary:
    """Record ``histories`` real-thread runs of seeded scripts on fresh caches and check each one.

    ``meet_every``: the threads meet (:class:`~spec.linearizability.checker.Rendezvous`)
    at every ``meet_every``-th call, so that every history has overlapping calls
    however fast or loaded the machine; None lets them run free throughout.
    ``switch_interval``: the interpreter's thread switch interval during the batch
    (short: more interleavings between meetings; the meetings do not need it).
    """
    summary = RunSummary()
    rng = random.Random(seed)
    start = time.perf_counter()
    spec = MetadataCacheHistorySpec(ttl, max_entries)
    with switch_often(switch_interval):
        for _ in range(histories):
            clock = FakeClock(START)
            target = ClockedCache(factory(ttl, max_entries=max_entries, clock=clock), clock)
            tick = 0.25 if ttl >= 0 else None
            scripts = random_scripts(rng, threads, length, keys, tick)
            history = run_threads(HistoryRecorder(), target, scripts, meet_every=meet_every)
            verdict = check_history(history, spec, max_steps)
            summary.record(history, verdict, meetings=meetings_of(scripts, meet_every))
            if stop_at_first_violation and verdict.linearizable is False:
                break
    summary.seconds = time.perf_counter() - start
    return summary
