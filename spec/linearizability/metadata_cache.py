"""MetadataCache histories (M7, M9): the sequential spec, the object under test, workloads.

The object under test is the cache *and* its clock: ``advance(delta)`` is an
operation of the history like any other, so expiry races are covered too.
The implementation reads the clock once, inside its lock, so each call takes
effect at that instant, inside its interval: the pair is linearizable.
The spec takes the eviction order (``"birth"`` or ``"lru"``, M6-lru) and the
batches (their keys as the operation's arguments), which
``random_scripts(..., batches=True)`` mixes into the workload.

The deliberately racy caches that show the checker fails, and their controls, are
``spec.variants.metadata_cache.RACES`` and ``SCHEDULED``.
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

from ..models import metadata_cache as model
from ..world.clock import FakeClock
from .checker import MAX_STEPS, Operation, Verdict, check_history
from .recording import SAFETY_TIMEOUT, HistoryRecorder, meetings_of, run_threads
from .scripts import Call, Pick, Script, always, below, weighted_scripts

__all__ = [
    "BATCHES",
    "MEET_EVERY",
    "ClockedCache",
    "MetadataCacheHistorySpec",
    "RunSummary",
    "check_real_thread_histories",
    "forced_racy_history",
    "forced_torn_batch_history",
    "overlapping",
    "random_scripts",
    "record_histories",
    "switch_often",
]

State = tuple[tuple[tuple[Hashable, float], ...], float]  # (live births in eviction order, now)
START = 1000.0
BATCHES = ("add_many", "contains_many", "contains_prefix", "remove_many")  # M9: the keys are the args
SINGLES = ((0.55, "add"), (0.9, "contains"), (0.96, "remove"))  # by the roll; len past 0.96


class MetadataCacheHistorySpec:
    """``spec.models.metadata_cache`` as a step function over hashable states (dead entries dropped)."""

    def __init__(self, ttl: float, max_entries: int | None, eviction: str = "birth") -> None:
        self.ttl, self.max_entries, self.lru = ttl, max_entries, eviction == "lru"
        self.initial: State = ((), START)

    def step(self, state: State, name: str, args: tuple[Hashable, ...]) -> tuple[State, Any]:
        items, now = state
        births = dict(items)
        answer: Any = None
        keys, ttl, bound, lru = list(args), self.ttl, self.max_entries, self.lru
        if name == "advance":
            assert isinstance(args[0], float)
            now += args[0]
        elif name in ("add", "add_many"):  # a single call is the batch of its one key (M9)
            births, _ = model.add_many(births, keys, now, ttl, bound, lru)
        elif name in ("contains", "contains_many"):
            answer, births = model.contains_many(births, keys, now, ttl, lru)
            answer = answer[0] if name == "contains" else answer
        elif name == "contains_prefix":
            answer, births = model.contains_prefix(births, keys, now, ttl, lru)
        elif name in ("remove", "remove_many"):
            births = model.remove_many(births, keys)
        elif name == "clear":
            births = {}
        elif name == "len":
            answer = len(model.live_keys(births, now, ttl))
        else:
            raise ValueError(f"unknown operation {name!r}")
        live = tuple((k, b) for k, b in births.items() if model.is_live(b, now, self.ttl))
        return (live, now), answer


class ClockedCache:
    """The object under test: a cache and the FakeClock it reads, as one set of operations."""

    def __init__(self, cache: Any, clock: FakeClock) -> None:
        self.cache, self.clock = cache, clock

    def __getattr__(self, name: str) -> Any:
        """The cache's own single calls; a batch (M9) takes its keys as the call's arguments."""
        method = getattr(self.cache, name)
        if name not in BATCHES:
            return method
        return lambda *keys: list(method(keys)) if name == "contains_many" else method(keys)

    def len(self) -> int:
        return len(self.cache)

    def advance(self, delta: float) -> None:
        self.clock.advance(delta)  # one advancing thread per history: the += is not shared


MEET_EVERY = 4  # the threads meet at calls 0, 4, 8, ... of their scripts (Rendezvous); free in between


def _forced(
    factory: Callable[..., Any],
    held: tuple[Hashable, ...],
    before: Script,
    during: Script,
    after: Script,
    **kwargs: Any,
) -> list[Operation]:
    """Thread 1 runs ``before``; thread 0 calls ``held`` (name, then args) and is held at its scheduling
    point while thread 1 runs ``during``; then thread 0 returns and thread 1 runs ``after``.  TTL -1."""
    reached, resume = threading.Event(), threading.Event()

    def hold() -> None:
        if threading.current_thread() is not threading.main_thread():
            reached.set()
            assert resume.wait(timeout=SAFETY_TIMEOUT), "the main thread never resumed thread 0"

    clock = FakeClock(START)
    target = ClockedCache(factory(-1, clock=clock, schedule_point=hold, **kwargs), clock)
    recorder = HistoryRecorder()

    def thread_1(script: Script) -> None:
        for name, args in script:
            recorder.perform(1, target, name, *args)

    thread_1(before)
    worker = threading.Thread(target=recorder.perform, args=(0, target, *held))
    worker.start()
    assert reached.wait(timeout=SAFETY_TIMEOUT), "thread 0 never reached its scheduling point"
    thread_1(during)
    resume.set()
    worker.join()
    thread_1(after)
    return recorder.operations


def forced_torn_batch_history(factory: Callable[..., Any]) -> list[Operation]:
    """Thread 0 asks ``contains_many(a, b)`` and is held at its scheduling point while thread 1 clears
    the cache.  Torn (held between the keys), it answers (True, False), which no order allows; the
    control (held before its atomic batch) answers (False, False)."""
    return _forced(factory, ("contains_many", "a", "b"), [("add_many", ("a", "b"))], [("clear", ())], [])


def forced_racy_history(factory: Callable[..., Any]) -> list[Operation]:
    """The bad interleaving, forced with events: thread 0 is held at the scheduling point of its add.

    Thread 0: ``add(a)``, held after its check.  Thread 1 meanwhile: ``add(a)``,
    ``add(b)``; then thread 0 finishes; then thread 1: ``add(c)``, ``contains(a)``,
    ``contains(b)``.  With bound 2 and TTL -1 every order the spec allows ends with
    ``a`` evicted by ``c``; the racy cache restarted ``a`` and evicts ``b`` instead.
    """
    during: Script = [("add", ("a",)), ("add", ("b",))]
    after: Script = [("add", ("c",)), ("contains", ("a",)), ("contains", ("b",))]
    return _forced(factory, ("add", "a"), [], during, after, max_entries=2)


def random_scripts(
    rng: random.Random,
    threads: int,
    length: int,
    keys: Sequence[str],
    tick: float | None,
    batches: bool = False,
) -> list[Script]:
    """One script per thread: mostly add/contains on a few keys; thread 0 also moves the clock.
    With ``batches``, a fifth of the calls are batches (M9) of one to three keys."""
    picks = [
        Pick(
            lambda thread, roll, r: tick is not None and thread == 0 and roll < 0.15,
            lambda r, k: ("advance", (tick,)),
        ),
        Pick(
            lambda thread, roll, r: batches and r.random() < 0.2,
            lambda r, k: (r.choice(BATCHES), tuple(r.choices(keys, k=r.randint(1, 3)))),
        ),
        *(Pick(below(bound), _single(name)) for bound, name in SINGLES),
        Pick(always, lambda r, k: ("len", ())),
    ]
    return weighted_scripts(rng, threads, length, picks, keys)


def _single(name: str) -> Callable[[random.Random, Hashable], Call]:
    return lambda r, key: (name, (key,))


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
            if other.call > op.end:
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
    eviction: str = "birth",
    batches: bool = False,
) -> RunSummary:
    """Record ``histories`` real-thread runs of seeded scripts on fresh caches and check each one.

    ``meet_every``: the threads meet at every ``meet_every``-th call, as in
    :func:`~spec.linearizability.recording.run_threads` (None: never).  ``eviction``: the spec's order (the
    factory must build caches that evict so).  ``batches``: the scripts include the M9 batches.
    ``switch_interval``: the interpreter's thread switch interval meanwhile (short: more interleavings).
    """
    rng = random.Random(seed)
    tick = 0.25 if ttl >= 0 else None

    def target() -> ClockedCache:
        clock = FakeClock(START)
        return ClockedCache(factory(ttl, max_entries=max_entries, clock=clock), clock)

    return record_histories(
        target,
        lambda: random_scripts(rng, threads, length, keys, tick, batches),
        MetadataCacheHistorySpec(ttl, max_entries, eviction=eviction),
        histories=histories,
        max_steps=max_steps,
        meet_every=meet_every,
        switch_interval=switch_interval,
        stop_at_first_violation=stop_at_first_violation,
    )


def record_histories(
    target: Callable[[], Any],
    scripts: Callable[[], list[Script]],
    spec: Any,
    *,
    histories: int,
    max_steps: int = MAX_STEPS,
    meet_every: int | None = MEET_EVERY,
    switch_interval: float = 1e-6,
    stop_at_first_violation: bool = False,
) -> RunSummary:
    """The one loop of the real-thread batches (the metadata cache's, the file store's): ``histories``
    times, the scripts run on a fresh ``target()`` (:func:`~spec.linearizability.recording.run_threads`,
    meeting every ``meet_every``-th call) and the history is checked against ``spec`` (which prepares it,
    a store's calls in their phases).  The oracle's ``--threads`` drives a target over its Session instead
    (``spec/oracle/_threads.py``: held at the clock and filesystem, for classes with no meeting points)."""
    summary = RunSummary()
    start = time.perf_counter()
    with switch_often(switch_interval):
        for _ in range(histories):
            plan = scripts()
            history = run_threads(HistoryRecorder(), target(), plan, meet_every=meet_every)
            verdict = check_history(history, spec, max_steps)
            summary.record(history, verdict, meetings=meetings_of(plan, meet_every))
            if stop_at_first_violation and verdict.linearizable is False:
                break
    summary.seconds = time.perf_counter() - start
    return summary
