"""``--threads N`` (O6): real threads on the target, each history checked linearizable against the spec.

How overlap is made, not hoped for.  The target's own scheduling points are the
oracle's: every read of the clock the oracle controls (passed in or patched in,
:mod:`spec.oracle._time`) and, for a file store, every operation on its fake
filesystem (before and after it, :mod:`spec.oracle._fs` and the port's hooks).
A :class:`Scheduler` lets one worker thread run at a time: at each point the
worker parks and the scheduler, from a seeded random generator, picks which
parked worker goes on.  So a thread is held *inside* its call (between what the
target read before the clock and what it does after) while the others call.

A held thread may hold the target's own lock.  The locks the target makes are
the scheduler's (its modules' ``threading.Lock``/``RLock`` are interposed for
the run, :class:`ScheduledLock`): a worker that would block on one parks
instead and is picked only once the lock is free, so the others wait on a held
worker's lock where the scheduler sees them, and when every worker left waits
for a lock another holds, that is a deadlock, reported at once.  A lock made
elsewhere (at import, in a C extension) still blocks for real: then a worker
the scheduler did not park, that has not finished, and whose top frame stands
still at a call into C (``with lock:``, ``lock.acquire()``) over consecutive
looks while the scheduler holds the interpreter lock is taken as blocked, and
another parked worker is picked.  The interpreter's switch interval is raised
for the run, so between two points one thread runs.  The schedule (the worker
picked at each decision) is recorded and replayed by the reproduction.

The oracle never hangs: a call that does not return within ``call_timeout``
seconds (a deadlock, a spinning call) is a FAIL with every thread's stack.

Verdicts: an exception escaping a call is an M7 (C5) failure with its
traceback; a history that no order explains is one too, unless the same calls
made one at a time already diverge, in which case the sequential check names
the class's own clause (M7 is never blamed for what one thread shows).  The
budget counts histories and search steps; an exhausted search is UNKNOWN.
"""

from __future__ import annotations

import dis
import itertools
import random
import sys
import threading
import time
import traceback
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from spec.fake_fs import FakeFileSystem
from spec.fakes import FakeClock
from spec.linearizability.checker import MAX_STEPS, PENDING, Operation, Raised, Verdict, check_history
from spec.linearizability.file_store import VALUE_OF, FileStoreHistorySpec, store_call
from spec.linearizability.metadata_cache import MetadataCacheHistorySpec, overlapping
from spec.linearizability.scripts import Call, Pick, Script, always, below, weighted_scripts
from spec.oracle._budgets import HISTORIES
from spec.oracle._errors import OracleUsageError
from spec.oracle._result import OracleResult
from spec.oracle._session import Session, TargetProxy
from spec.oracle._time import restore, time_modules
from spec.oracle._timeout import (  # the sequential runs' call guard's
    CALL_TIMEOUT,
    CallGuard,
    current_frames,
    stop_thread,
)

__all__ = [
    "CALL_TIMEOUT",
    "HISTORIES",
    "THREADED_COMPONENTS",
    "Schedule",
    "Scheduler",
    "ThreadsRun",
    "World",
    "run_history",
    "worlds",
]

LENGTHS = (8,)  # calls per thread (a failure is then shrunk to the fewest calls that still show it)
SWITCH_AT_A_POINT = 0.5  # the chance that a point inside a call hands over to another thread
POLL = 0.0002  # seconds between two looks at threads the scheduler neither parked nor saw finish
STILL_LOOKS = 3  # consecutive looks at an unmoved frame in a call into C: the thread is blocked
START = 1000.0

THREADED_COMPONENTS = ("metadata-cache", "file-store")
_C_CALLS = frozenset(dis.opmap[name] for name in ("BEFORE_WITH", "CALL", "PRECALL") if name in dis.opmap)
_local = threading.local()  # the worker index of the calling thread (absent: not a worker)


class _Stopped(BaseException):
    """Raised asynchronously in a worker whose call is past its time (a spin stops at its next bytecode)."""


class ThreadCallTimedOut(Exception):
    """A call did not return within the call timeout: a deadlock or a spinning call."""


@dataclass
class Schedule:
    """The decisions of one run: the worker picked at each one (and whether a replay kept to them)."""

    picks: list[int] = field(default_factory=list)
    followed: bool = True


class Scheduler:
    """One worker runs at a time; at each point the running worker parks and a parked one is picked.

    ``choose(ready, last, where)`` picks among the parked workers (sorted); ``replay``, when given, is the
    picks of an earlier run, followed while the worker it names is parked.
    """

    def __init__(
        self,
        workers: int,
        choose: Callable[[list[int], int | None, str], int],
        replay: Sequence[int] = (),
        *,
        native_calls_progress: bool = False,
    ) -> None:
        self.workers = workers
        # O12: a target whose C calls do work that lets the interpreter lock go (torch, numpy's writes), so
        # a worker standing at one is never taken as blocked (a real block ends as a call past its time):
        # its schedule cannot depend on how long such a call takes on a loaded machine
        self.native_calls_progress = native_calls_progress
        self._choose = choose
        self._replay = list(replay)
        self.schedule = Schedule()
        # One mutex; the scheduler waits on ``_cv`` and each worker on its own turn, so a hand-over
        # wakes the one thread it concerns (a shared condition woke every parked worker at each of them).
        self._mutex = threading.Lock()
        self._cv = threading.Condition(self._mutex)
        self._turns = [threading.Condition(self._mutex) for _ in range(workers)]
        self.parked: dict[int, str] = {}  # worker -> where it is held
        self.waiting: dict[int, ScheduledLock] = {}  # parked workers waiting for a lock of the target's
        self.done: set[int] = set()
        self.granted: int | None = None
        self.idents: dict[int, int] = {}
        self.aborted = False
        self._last: int | None = None

    def point(self, where: str) -> None:
        """Park the calling worker here until it is picked (a no-op outside the workers)."""
        index = getattr(_local, "index", None)
        if index is None or getattr(_local, "scheduler", None) is not self:
            return
        with self._mutex:
            self.parked[index] = where
            self._hand_over()
            turn = self._turns[index]
            while self.granted != index and not self.aborted:
                turn.wait()
            self.parked.pop(index, None)
            self.granted = None
            if self.aborted:
                raise _Stopped  # the run is over: the worker ends here

    def wait_lock(self, lock: ScheduledLock) -> None:
        """Park the calling worker until it is picked with ``lock`` free (picked only then)."""
        index = getattr(_local, "index", None)
        if index is None:
            return
        with self._mutex:
            self.waiting[index] = lock
            self.parked[index] = "lock"
            self._hand_over()
            turn = self._turns[index]
            while self.granted != index and not self.aborted:
                turn.wait()
            self.parked.pop(index, None)
            self.waiting.pop(index, None)
            self.granted = None

    def _ready(self) -> list[int]:
        return sorted(i for i in self.parked if i not in self.waiting or self.waiting[i].owner is None)

    def finished(self, index: int) -> None:
        with self._mutex:
            self.done.add(index)
            self._hand_over()

    def abort(self) -> None:
        with self._mutex:
            self.aborted = True
            self._cv.notify_all()
            for turn in self._turns:
                turn.notify_all()

    def _hand_over(self) -> None:
        """The worker that just parked or finished picks the next one itself when every worker is parked
        or finished (one thread switch, not two); otherwise the scheduler looks (mutex held)."""
        if not (self.granted is None and self._none_running() and self._grant()):
            self._cv.notify()

    def _none_running(self) -> bool:
        """Whether every worker is parked or finished (mutex held)."""
        return len(self.parked) + len(self.done) == self.workers

    def _grant(self) -> bool:
        """Pick the next worker among the ready ones and wake it (mutex held); False when none is ready."""
        ready = self._ready()
        if not ready:
            return False
        where = self.parked.get(self._last, "call") if self._last is not None else "call"
        pick = self._pick(ready, where)
        self.schedule.picks.append(pick)
        self._last = self.granted = pick
        self._turns[pick].notify()
        return True

    def _settled(self, looks: dict[int, tuple[int, int, int]]) -> bool:
        """Whether every worker is parked, finished or blocked (lock held: the workers are not running)."""
        frames = current_frames()
        settled = True
        for index in range(self.workers):
            if index in self.done or index in self.parked:
                looks.pop(index, None)
                continue
            frame = frames.get(self.idents.get(index, -1))
            if frame is None or self.native_calls_progress:
                settled = False  # not started yet, or in a native call under way: wait for its next point
                continue
            code = frame.f_code.co_code
            in_c = 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in _C_CALLS
            seen = (id(frame), frame.f_lasti)
            count = looks.get(index, (0, 0, 0))
            looks[index] = (*seen, count[2] + 1 if count[:2] == seen and in_c else int(in_c))
            if looks[index][2] < STILL_LOOKS:
                settled = False
        return settled

    def run(self, deadline: Callable[[], int | None]) -> None:
        """Pick workers until all finished; ``deadline()`` raises ThreadCallTimedOut for a late call."""
        looks: dict[int, tuple[int, int, int]] = {}
        with self._cv:
            while len(self.done) < self.workers:
                if self.granted is not None or not self._settled(looks):
                    self._cv.wait(POLL)
                    deadline()
                    continue
                if self._grant():
                    looks.clear()
                    continue
                if self.parked and self._none_running():
                    raise ThreadCallTimedOut(self._deadlock())  # each waits for a lock another holds: now
                self._cv.wait(POLL)  # every worker left is blocked: a deadlock, or a wake-up under way
                deadline()

    def _deadlock(self) -> str:
        owners = {thread: index for index, thread in self.idents.items()}
        waits = ", ".join(
            f"t{index} waits for a lock t{owners.get(lock.owner or -1, '?')} holds"
            for index, lock in sorted(self.waiting.items())
        )
        return f"a deadlock: {waits}"

    def _pick(self, ready: list[int], where: str) -> int:
        step = len(self.schedule.picks)
        if step < len(self._replay):
            if self._replay[step] in ready:
                return self._replay[step]
            self.schedule.followed = False
        return self._choose(ready, self._last, where)


class HoldingChooser:
    """Holds, as O6 says: at a point inside a call, the running worker is held (even odds) while the
    others make one to three whole calls (their own points do not hold them), then it goes on to the
    end of its call; at the start of a call, any parked worker goes.  Seeded: the same picks for the
    same seed, whatever the machine."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.held: int | None = None
        self.calls_left = 0
        self.finishing: int | None = None  # a worker that was held, now running to the end of its call

    def __call__(self, ready: list[int], last: int | None, where: str) -> int:
        if last is not None and where != "call" and last in ready:  # `last` is inside a call
            if last in (self.finishing, self.held) or self.held is not None:
                return last  # a held worker's turn to finish, or another's call runs whole
            if self.rng.random() < SWITCH_AT_A_POINT and len(ready) > 1:
                self.held, self.calls_left = last, self.rng.randint(1, 3)
                return self.rng.choice([r for r in ready if r != last])
            return last
        if last is not None and last == self.finishing:
            self.finishing = None  # its call ended
        if self.held is not None:
            if last is not None and last != self.held and where == "call":
                self.calls_left -= 1
            others = [r for r in ready if r != self.held]
            if self.calls_left > 0 and others:
                return self.rng.choice(others)
            held = self.held
            if held in ready:
                self.held, self.finishing = None, held
                return held
            return self.rng.choice(ready)
        return self.rng.choice(ready)


def random_chooser(rng: random.Random) -> Callable[[list[int], int | None, str], int]:
    return HoldingChooser(rng)


def _first(ready: list[int], last: int | None, where: str) -> int:
    """The chooser of a replay past its schedule: the lowest parked worker."""
    return ready[0]


class ScheduledLock:
    """A lock of the target's, made by the oracle: its modules' ``threading.Lock``/``RLock`` are
    interposed for the run (:func:`interpose_locks`).  A worker that would block on it parks instead
    (:meth:`Scheduler.wait_lock`) and is picked only once it is free, so a worker never waits where the
    scheduler cannot see it, and the schedule alone fixes the history.  Outside the workers (the target
    built in the main thread) it is a plain lock."""

    def __init__(self, reentrant: bool) -> None:
        self.reentrant = reentrant
        self.owner: int | None = None  # the holder's thread ident
        self.count = 0
        self._guard = threading.Lock()

    def _take(self, me: int) -> bool:
        with self._guard:
            if self.owner is None or (self.reentrant and self.owner == me):
                self.owner, self.count = me, self.count + 1
                return True
            return False

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        me = threading.get_ident()
        while not self._take(me):
            if not blocking or timeout >= 0:
                return False  # a timed wait on a held lock: the time is the scheduler's, it ends now
            scheduler = getattr(_local, "scheduler", None)
            if scheduler is not None and scheduler.aborted:
                raise _Stopped  # the run is over (a deadlock, a call past its time): the worker ends
            if scheduler is not None:
                scheduler.wait_lock(self)
            else:
                time.sleep(0.0001)  # no scheduler (the main thread, or a run that ended): wait plainly
        return True

    def release(self) -> None:
        with self._guard:
            if self.owner is None or (self.reentrant and self.owner != threading.get_ident()):
                raise RuntimeError("cannot release un-acquired lock")
            self.count -= 1
            if self.count == 0 or not self.reentrant:
                self.owner, self.count = None, 0

    def locked(self) -> bool:
        return self.owner is not None

    def _is_owned(self) -> bool:  # threading.Condition over an RLock asks
        return self.owner == threading.get_ident()

    __enter__ = acquire

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lock() -> ScheduledLock:
    return ScheduledLock(reentrant=False)


def _rlock() -> ScheduledLock:
    return ScheduledLock(reentrant=True)


def interpose_locks(module: ModuleType) -> dict[str, Any]:
    """Point ``module``'s ``threading`` (and ``Lock``/``RLock`` imported by name) at the oracle's locks;
    what it replaced (name -> original), for :func:`~spec.oracle._time.restore`."""
    fake = ModuleType("threading", "the oracle's view of threading: its locks are the scheduler's")
    fake.__dict__.update({k: v for k, v in vars(threading).items() if not k.startswith("__")})
    fake.Lock, fake.RLock = _lock, _rlock  # type: ignore[attr-defined]
    stand_ins = {id(threading): fake, id(threading.Lock): _lock, id(threading.RLock): _rlock}
    names = vars(module).items()
    replaced = {name: v for name, v in names if not name.startswith("__") and id(v) in stand_ins}
    vars(module).update({name: stand_ins[id(v)] for name, v in replaced.items()})
    return replaced


_NOT_THE_TARGETS = ("spec.oracle", "spec.linearizability", "spec.fake_fs", "spec.fakes")


def lock_modules(session: Session, world: World) -> list[ModuleType]:
    """The modules whose locks the target makes: those of its class (or factory) and its bases, and of
    the objects it keeps (two levels down), found on one instance built for the purpose; the oracle's
    own modules left out."""
    cached = getattr(session, "_lock_modules", None)
    if cached is not None:
        return list(cached)
    config = world.configs(session)[0]
    clock = FakeClock(START)
    timed = "clock" in session.component.constructor
    obj = session.build(world.init(config, clock), clock if timed else None)
    found = [*time_modules(session.target), *time_modules(obj)]
    layer = [obj]
    for _ in range(2):
        kept = [v for o in layer for v in getattr(o, "__dict__", {}).values() if not isinstance(v, type)]
        found += [m for v in kept for m in time_modules(v)]
        layer = kept
    modules = [m for m in dict.fromkeys(found) if not m.__name__.startswith(_NOT_THE_TARGETS)]
    session._lock_modules = modules  # type: ignore[attr-defined]
    return list(modules)


class _ScheduledClock:
    """The clock the target reads: a point of the scheduler, then the fake clock's reading."""

    def __init__(self, clock: FakeClock, scheduler: Scheduler) -> None:
        self.clock, self.scheduler = clock, scheduler

    @property
    def now(self) -> float:
        """The reading without a point (Session.now())."""
        return self.clock.now

    def __call__(self) -> float:
        self.scheduler.point("clock")
        return self.clock()


@dataclass
class World:
    """What one component's threads run on: its spec, the workload, and how a fresh target is built."""

    component: str
    configs: Callable[[Session], list[dict[str, Any]]]
    spec: Callable[[dict[str, Any], Session], Any]
    # scripts(rng, threads, length, config, offered): the calls drawn only from ``offered``, the spec
    # methods the probe found on the target and that are not left out (O10)
    scripts: Callable[[random.Random, int, int, dict[str, Any], frozenset[str]], list[Script]]
    init: Callable[[dict[str, Any], FakeClock], dict[str, Any]]
    clause: str  # the thread-safety clause: M7, C5
    # One call of a script on the target: perform(call, name, args) calls call(name, the target's spec
    # arguments) and gives the answer the spec gives (a batch's keys are the script's arguments).
    perform: Callable[[Callable[[str, tuple[Any, ...]], Any], str, tuple[Hashable, ...]], Any]
    batches: frozenset[str] = frozenset()  # operations whose tear is M9's too
    # O12: how a call is made on a target in the engine's form (None: as ``perform``)
    engine_perform: (
        Callable[[Callable[[str, tuple[Any, ...]], Any], str, tuple[Hashable, ...]], Any] | None
    ) = None

    def performer(
        self, session: Session
    ) -> Callable[[Callable[[str, tuple[Any, ...]], Any], str, tuple[Hashable, ...]], Any]:
        """The ``perform`` of this run: the engine form's where the probe found that form (O10)."""
        return self.engine_perform if session.probe.form == "engine" and self.engine_perform else self.perform


# -- metadata cache -----------------------------------------------------------------------------------

_MC_BATCHES = ("add_many", "contains_many", "contains_prefix", "remove_many")
_MC_TICKS = (0.25, 0.75)
# rng.choices' weights of the single calls
_MC_SINGLES = (("add", 6), ("contains", 5), ("remove", 1), ("__len__", 1), ("clear", 1))


def _mc_configs(session: Session) -> list[dict[str, Any]]:
    """TTL 0.5 with the clock moving by 0.25 or 0.75, bounded at 2 over three
    keys and unbounded over two, and TTL -1 bounded at 2; without what the target lacks."""
    configs: list[dict[str, Any]] = [
        {"ttl_seconds": 0.5, "max_entries": 2},
        {"ttl_seconds": 0.5, "max_entries": None},
        {"ttl_seconds": -1.0, "max_entries": 2},
        {"ttl_seconds": 0.5, "max_entries": 2},
    ]
    if "max_entries" in session.left_out:
        unbounded = [c for c in configs if c["max_entries"] is None]
        configs = unbounded or [{"ttl_seconds": 0.5, "max_entries": None}]
    return configs


def _mc_spec(config: dict[str, Any], session: Session) -> Any:
    eviction = session.declared.get("eviction", "birth")
    return MetadataCacheHistorySpec(config["ttl_seconds"], config["max_entries"], eviction=eviction)


def _mc_scripts(
    rng: random.Random, threads: int, length: int, config: dict[str, Any], offered: frozenset[str]
) -> list[Script]:
    """Mostly add/contains on three keys, some remove, len, clear and batches (those of them ``offered``);
    thread 0 moves the clock."""
    keys = ("a", "b", "c") if config["max_entries"] is not None else ("a", "b")
    moves = config["ttl_seconds"] >= 0
    singles = [(n, w) for n, w in _MC_SINGLES if n in offered]
    batches = [b for b in _MC_BATCHES if b in offered]

    def single(r: random.Random, key: Hashable) -> Call:
        name = r.choices([n for n, _ in singles], [w for _, w in singles])[0]
        return name, () if name in ("__len__", "clear") else (r.choice(keys),)

    picks = [
        Pick(
            lambda thread, roll, r: thread == 0 and moves and roll < 0.3,
            lambda r, k: ("advance", (r.choice(_MC_TICKS),)),
        ),
        *(
            [
                Pick(
                    lambda thread, roll, r: roll < 0.45 and r.random() < 0.5,
                    lambda r, k: (r.choice(batches), tuple(r.sample(keys, r.randint(1, 2)))),
                )
            ]
            if batches
            else []
        ),
        Pick(always, single),
    ]
    return weighted_scripts(rng, threads, length, picks)


def _mc_init(config: dict[str, Any], clock: FakeClock) -> dict[str, Any]:
    return dict(config)


def _mc_perform(call: Callable[[str, tuple[Any, ...]], Any], name: str, args: tuple[Hashable, ...]) -> Any:
    """A batch (M9) takes its keys as one list; ``contains_many``'s answer is the spec's list."""
    if name not in _MC_BATCHES:
        return call(name, args)
    result = call(name, (list(args),))
    if name == "contains_many" and isinstance(result, (tuple, list)):
        return [bool(r) for r in result]
    return result


# -- file store -------------------------------------------------------------------------------------

_FS_CAP = 6


def _fs_configs(session: Session) -> list[dict[str, Any]]:
    """Cap 6, ratio 1.0, the metadata cache on (TTL -1); with ``--settings``, the configuration pinned (the
    clock stands still under threads: a TTL >= 0 never ends a belief, as -1 does not)."""
    pinned = session.settings
    if pinned is None:
        return [{"cap": _FS_CAP}]
    return [
        {
            "cap": pinned["max_size"],
            "ratio": pinned["eviction_ratio"],
            "min_free": pinned["min_free_space"],
            "metadata": pinned["enable_metadata_cache"],
            "ttl": pinned["metadata_ttl"],
        }
    ]


def _fs_spec(config: dict[str, Any], session: Session) -> Any:
    return FileStoreHistorySpec(
        config["cap"],
        config.get("metadata", True),
        ratio=config.get("ratio", 1.0),
        min_free=config.get("min_free", 0),
    )


_FS_SIZES = (2, 3, 4)  # get_into's buffers: the values' sizes (VALUE_OF), one of them each key's own
# (threshold of the roll, operation): C5's calls, the batches over two or three distinct keys (F5)
_FS_CALLS = (
    (0.25, "set"),
    (0.37, "get"),
    (0.58, "exists"),
    (0.68, "delete"),
    (0.74, "get_into"),
    (0.82, "batch_set"),
    (0.88, "batch_get"),
    (0.96, "batch_exists"),
    (1.0, "clear"),
)


def _fs_scripts(
    rng: random.Random, threads: int, length: int, config: dict[str, Any], offered: frozenset[str]
) -> list[Script]:
    """C5's calls over three content-addressed keys (one value per key): mostly sets, gets, exists and
    deletes; some get_into (a buffer of each value's size), batches of two or three distinct keys, and
    clear; only those ``offered`` (a call the target lacks gives its share to the next one)."""
    keys = tuple(VALUE_OF)
    calls = [(bound, name) for bound, name in _FS_CALLS if name in offered]
    calls[-1] = (1.0, calls[-1][1])  # the table ends in a pick always taken

    def make(name: str) -> Callable[[random.Random, Hashable], Call]:
        if name == "get_into":
            return lambda r, key: (name, (key, r.choice(_FS_SIZES)))
        if name.startswith("batch_"):
            return lambda r, key: (name, tuple(r.sample(keys, r.randint(2, 3))))
        if name == "clear":
            return lambda r, key: (name, ())
        return store_call(name)

    picks = [Pick(below(bound), make(name)) for bound, name in calls]
    return weighted_scripts(rng, threads, length, picks, keys)


def _fs_perform(call: Callable[[str, tuple[Any, ...]], Any], name: str, args: tuple[Hashable, ...]) -> Any:
    """A batch takes its keys as one list (``batch_set`` their values too, ``VALUE_OF``); ``get_into``
    fills a fresh buffer of the script's size, and answers with what it read (None for False), the
    answer of the spec's ``get_into``; a batch's answers as a list."""
    if name == "get_into":
        key, size = args
        assert isinstance(size, int)
        buffer = bytearray(size)
        answer = call(name, (key, buffer))
        return bytes(buffer) if answer is True else None if answer is False else answer
    if name == "batch_set":
        answer = call(name, (list(args), [VALUE_OF[str(k)] for k in args]))
    elif name in ("batch_get", "batch_exists"):
        answer = call(name, (list(args),))
    else:
        return call(name, args)
    return list(answer) if isinstance(answer, tuple) else answer


def _fs_engine_perform(
    call: Callable[[str, tuple[Any, ...]], Any], name: str, args: tuple[Hashable, ...]
) -> Any:
    """O12 under threads: the engine reads a page into a target the caller sizes (its callers know a page's
    size), so a ``get`` is the engine's read into a target of the key's own size (``VALUE_OF``: one value
    per key in this world), a ``batch_get`` one such read per key in order (the engine's ``batch_get`` is
    that loop), a ``batch_set`` the engine's loop of sets, stopping at the first refused one (its answer:
    the attempted sets' answers; the engine's own answers one bool, which does not say which keys were
    written), and a ``get_into`` of another size is answered as the spec answers it (None) without a
    call: a read of a wrong size is F4's, which the sequential run checks (the engine fails it).  Without
    this, the shim's size (read from the world before the engine's own read) races the other threads'
    writes, and every history shows F4 again instead of the races C5 is about."""
    if name == "get":
        return _fs_engine_perform(call, "get_into", (args[0], len(VALUE_OF[str(args[0])])))
    if name == "batch_get":
        return [_fs_engine_perform(call, "get", (key,)) for key in args]
    if name == "batch_set":  # the engine's batch_set: its sets in order, none after the first refused
        answers: list[Any] = []
        for key in args:
            answers.append(call("set", (key, VALUE_OF[str(key)])))
            if answers[-1] is not True:
                break
        return answers
    if name == "get_into" and args[1] != len(VALUE_OF[str(args[0])]):
        return None
    return _fs_perform(call, name, args)


def _fs_init(config: dict[str, Any], clock: FakeClock) -> dict[str, Any]:
    extra = {
        "max_size": config["cap"],
        "eviction_ratio": config.get("ratio", 1.0),
        "enable_metadata_cache": config.get("metadata", True),
        "metadata_ttl": config.get("ttl", -1),
    }
    if config.get("min_free", 0):
        extra["min_free_space"] = config["min_free"]
    return {"storage_dir": "/cache", "namespace": "_ns", "extra_config": extra, "fs": FakeFileSystem(clock)}


def worlds() -> dict[str, World]:
    return {
        "metadata-cache": World(
            "metadata-cache",
            _mc_configs,
            _mc_spec,
            _mc_scripts,
            _mc_init,
            "M7",
            _mc_perform,
            frozenset(_MC_BATCHES),
        ),
        "file-store": World(
            "file-store",
            _fs_configs,
            _fs_spec,
            _fs_scripts,
            _fs_init,
            "C5",
            _fs_perform,
            engine_perform=_fs_engine_perform,
        ),
    }


# -- one history -----------------------------------------------------------------------------------


@dataclass
class ThreadsRun:
    """One recorded history: the operations, the schedule, and a call that never returned (with stacks)."""

    history: list[Operation]
    schedule: Schedule
    scripts: list[Script]
    config: dict[str, Any]
    timed_out: str = ""  # the call past its time, the calls in flight and every thread's stack
    workers: list[threading.Thread] = field(default_factory=list)


def _stacks(threads: Mapping[int, threading.Thread]) -> str:
    frames = current_frames()
    parts = []
    for index, thread in sorted(threads.items()):
        frame = frames.get(thread.ident or -1)
        stack = "    (ended)\n"
        if frame is not None:  # from the worker's call on (the thread's bootstrap left out)
            lines = traceback.format_stack(frame)
            start = next((i for i, line in enumerate(lines) if ", in worker\n" in line), 0)
            stack = "".join(lines[start:])
        parts.append(f"thread {index}:\n{stack}")
    return "".join(parts)


def run_history(
    session: Session,
    world: World,
    config: dict[str, Any],
    scripts: list[Script],
    choose: Callable[[list[int], int | None, str], int],
    *,
    replay: Sequence[int] = (),
    call_timeout: float = CALL_TIMEOUT,
) -> ThreadsRun:
    """Run one script per worker thread on a fresh target under a :class:`Scheduler`; the history."""
    clock = FakeClock(START)
    engine = session.probe.form == "engine"
    scheduler = Scheduler(len(scripts), choose, replay, native_calls_progress=engine)
    read = _ScheduledClock(clock, scheduler)
    init = world.init(config, clock)
    fs = init.get("fs")
    if isinstance(fs, FakeFileSystem):
        fs.before = lambda op, path: scheduler.point(f"before {op} {path}")
        fs.after = lambda op, path: scheduler.point(f"after {op} {path}")
    has_clock = "clock" in session.component.constructor
    # The target's locks are the scheduler's for the whole run: made at construction or later in a call.
    patched = [(module, interpose_locks(module)) for module in lock_modules(session, world)]

    def unpatch() -> None:
        for module, replaced in reversed(patched):
            restore(module, replaced)

    try:
        obj = session.build(init, read if has_clock else None)
    except BaseException:
        unpatch()
        raise
    target = TargetProxy(session, obj, (), None)

    perform = world.performer(session)

    def on_target(name: str, args: tuple[Any, ...]) -> Any:
        return target._call(name, args, {})

    stamps = itertools.count()
    history: list[Operation] = []
    in_flight: dict[int, tuple[str, tuple[Hashable, ...], float]] = {}

    def worker(index: int, script: Script) -> None:
        _local.index, _local.scheduler = index, scheduler
        try:
            for name, args in script:
                scheduler.point("call")
                call = next(stamps)
                in_flight[index] = (name, args, time.monotonic())
                result: Any
                if name == "advance":
                    assert isinstance(args[0], float)
                    clock.now += args[0]
                    result = None
                else:
                    try:
                        result = perform(on_target, name, args)
                    except Exception as error:
                        result = Raised(type(error).__name__, traceback.format_exc())
                del in_flight[index]
                recorded = "len" if name == "__len__" else name
                history.append(Operation(index, recorded, args, result, call, next(stamps)))
        except _Stopped:
            pass  # past its call timeout: the run is over, its call stays in flight
        finally:
            scheduler.finished(index)

    threads = {i: threading.Thread(target=worker, args=(i, s), daemon=True) for i, s in enumerate(scripts)}
    run = ThreadsRun(history, scheduler.schedule, scripts, config, workers=list(threads.values()))

    def text(name: str, args: tuple[Hashable, ...]) -> str:
        return f"{name}({', '.join(map(repr, args))})"

    def flight() -> str:
        return ", ".join(f"t{i}: {text(n, a)}" for i, (n, a, _) in sorted(in_flight.items()))

    def deadline() -> None:
        now = time.monotonic()
        late = [(i, text(n, a)) for i, (n, a, since) in list(in_flight.items()) if now - since > call_timeout]
        if late:
            index, what = late[0]
            raise ThreadCallTimedOut(
                f"t{index}: {what} did not return within {call_timeout} s (calls in flight: {flight()})\n"
                + _stacks(threads)
            )

    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # threads switch only when one blocks: one runs between two points
    try:
        for index, thread in threads.items():
            thread.start()
            scheduler.idents[index] = thread.ident or -1
        scheduler.run(deadline)
    except ThreadCallTimedOut as late:
        run.timed_out = str(late)
        if "\n" not in run.timed_out:  # a deadlock the scheduler saw at once: the calls and the stacks
            run.timed_out += f" (calls in flight: {flight()})\n{_stacks(threads)}"
        scheduler.abort()
        for index, thread in threads.items():
            if index in in_flight:
                stop_thread(thread, _Stopped)  # a spin stops at its next bytecode
        for index, (name, args, _since) in list(in_flight.items()):
            history.append(Operation(index, name, args, PENDING, next(stamps), None))
    finally:
        sys.setswitchinterval(old)
        unpatch()
    for thread in threads.values():
        if not run.timed_out:
            thread.join()
    history.sort(key=lambda op: op.call)
    return run


# -- the search -----------------------------------------------------------------------------------


@dataclass
class FailingHistory:
    """A failing history and what it shows."""

    run: ThreadsRun
    kind: str  # "raised", "not linearizable", "timed out"
    verdict: Verdict | None = None
    detail: str = ""


@dataclass
class ThreadsFigures:
    histories: int = 0
    operations: int = 0
    overlapping: int = 0
    points: int = 0  # decisions of the scheduler
    search_steps: int = 0
    unknown: int = 0
    seconds: float = 0.0


def judge(run: ThreadsRun, spec: Any, max_steps: int) -> tuple[FailingHistory | None, Verdict | None]:
    """The failure a history shows (an exception, a call past its time, no order), or None; the verdict."""
    if run.timed_out:
        return FailingHistory(run, "timed out", detail=run.timed_out), None
    raised = next((op for op in run.history if isinstance(op.result, Raised)), None)
    if raised is not None:
        assert isinstance(raised.result, Raised)
        return FailingHistory(run, "raised", detail=f"{raised}\n{raised.result.detail}"), None
    verdict = check_history(run.history, spec, max_steps)
    if verdict.linearizable is False:
        return FailingHistory(run, "not linearizable", verdict), verdict
    return None, verdict


def search(
    session: Session,
    world: World,
    *,
    threads: int,
    histories: int,
    seed: int,
    max_steps: int,
    call_timeout: float,
) -> tuple[FailingHistory | None, ThreadsFigures]:
    """Run up to ``histories`` histories, their scripts growing through ``LENGTHS``; the first failure."""
    figures = ThreadsFigures()
    configs = world.configs(session)
    offered = frozenset(m for m in session.component.methods if session.offers(m))
    start = time.perf_counter()
    per_length = max(1, histories // len(LENGTHS))
    found: FailingHistory | None = None
    for number in range(histories):
        length = LENGTHS[min(number // per_length, len(LENGTHS) - 1)]
        rng = random.Random(seed * 1_000_003 + number)
        config = configs[number % len(configs)]
        scripts = world.scripts(rng, threads, length, config, offered)
        run = run_history(session, world, config, scripts, random_chooser(rng), call_timeout=call_timeout)
        failure, verdict = judge(run, world.spec(config, session), max_steps)
        figures.histories += 1
        figures.operations += len(run.history)
        figures.overlapping += overlapping(run.history)
        figures.points += len(run.schedule.picks)
        if verdict is not None:
            figures.search_steps += verdict.steps
            figures.unknown += verdict.linearizable is None
        if failure is not None:
            found = failure
            found.detail = found.detail or ""
            found.run.config = config
            _remember_seed(found, seed * 1_000_003 + number)
            break
    figures.seconds = round(time.perf_counter() - start, 2)
    return found, figures


def _remember_seed(found: FailingHistory, seed: int) -> None:
    found.run.config = {**found.run.config, "_seed": seed}


def usage_check(component: str, threads: int) -> None:
    if component not in THREADED_COMPONENTS:
        raise OracleUsageError(
            f"--threads: {component} is not checked under threads (only {', '.join(THREADED_COMPONENTS)}: "
            "the existence cache and the pool beliefs are used from one thread by design, E)"
        )
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 2:
        raise OracleUsageError(f"--threads must be an int >= 2, got {threads!r}")


def _shrink(
    session: Session, world: World, found: FailingHistory, *, max_steps: int, call_timeout: float, budget: int
) -> FailingHistory:
    """Drop calls one at a time while the failing schedule, or one of a few seeded others, still fails
    the same way (at most ``budget`` histories): the shortest history found."""
    best = found
    tries = 0
    seed = int(found.run.config.get("_seed", 0))
    config = {k: v for k, v in found.run.config.items() if k != "_seed"}
    changed = True
    while changed and tries < budget:
        changed = False
        for thread in range(len(best.run.scripts)):
            for position in range(len(best.run.scripts[thread]) - 1, -1, -1):
                scripts = [list(s) for s in best.run.scripts]
                del scripts[thread][position]
                if not any(scripts):
                    continue
                for attempt in range(6):
                    if tries >= budget:
                        return best
                    tries += 1
                    rng = random.Random(seed * 7919 + tries * 31 + attempt)
                    # First the failing schedule itself (a thread whose pick is gone is replaced by the
                    # lowest parked one), then fresh seeded schedules.
                    replay = best.run.schedule.picks if attempt == 0 else ()
                    run = run_history(
                        session,
                        world,
                        config,
                        scripts,
                        _first if attempt == 0 else random_chooser(rng),
                        replay=replay,
                        call_timeout=call_timeout,
                    )
                    failure, _ = judge(run, world.spec(config, session), max_steps)
                    if failure is not None and failure.kind == best.kind:
                        failure.run.config = {**config, "_seed": seed}
                        best, changed = failure, True
                        break
                if changed:
                    break
            if changed:
                break
    return best


def sequential_replay(
    session: Session, world: World, found: FailingHistory, *, max_steps: int, call_timeout: float
) -> FailingHistory | None:
    """The calls of the failing history made one at a time, in the order they were called, on a fresh
    target: the failure they show already (the class is wrong sequentially), or None."""
    calls: Script = [(op.name if op.name != "len" else "__len__", op.args) for op in found.run.history]
    config = {k: v for k, v in found.run.config.items() if k != "_seed"}
    run = run_history(session, world, config, [calls], _first, call_timeout=call_timeout)
    failure, _ = judge(run, world.spec(config, session), max_steps)
    return failure


# -- the run and its report ------------------------------------------------------------------------


def _call_text(op: Operation) -> str:
    if op.name == "advance":
        return f"(the clock moves by {op.args[0]})"
    args = ", ".join(repr(a) for a in op.args)
    result = "(never returned)" if op.ret is None else repr(op.result)
    return f"{op.name}({args}) -> {result}"


def render_history(found: FailingHistory) -> list[str]:
    """The history as calls per thread, each with its [call..return] stamps; the calls outside the longest
    prefix some order explains are marked."""
    explained = {id(op) for op in found.verdict.stuck} if found.verdict is not None else None
    lines = []
    for thread in sorted({op.thread for op in found.run.history}):
        lines.append(f"thread {thread}:")
        for op in (o for o in found.run.history if o.thread == thread):
            end = "..." if op.ret is None else int(op.ret)
            mark = "" if explained is None or id(op) in explained else "   <- no order explains it"
            lines.append(f"  {_call_text(op)}   [{int(op.call)}..{end}]{mark}")
    return lines


def render_repro(
    component: str, target_path: str, found: FailingHistory, clauses: list[str], session: Session
) -> str:
    config = {k: v for k, v in found.run.config.items() if k != "_seed"}
    scripts = [[(n, a) for n, a in s] for s in found.run.scripts]
    return "\n".join(
        [
            f'"""Reproduction: {target_path} as {component} under --threads {len(scripts)}'
            f" breaks {', '.join(clauses) or 'the spec'}.",
            "",
            "The scripts run on real threads under the oracle's scheduler, which picks the thread that",
            "goes on at each scheduling point (a clock reading, a filesystem call, a call's start) as the",
            "failing run did: the schedule.  The same history comes back and fails the same check.",
            '"""',
            "",
            "from spec.oracle import replay_threads",
            "",
            f"SCRIPTS = {scripts!r}",
            f"SCHEDULE = {found.run.schedule.picks!r}",
            "",
            "",
            "def test_the_threads_history_is_linearizable() -> None:",
            "    failure = replay_threads(",
            f"        {component!r},",
            f"        {target_path!r},",
            f"        config={config!r},",
            "        scripts=SCRIPTS,",
            "        schedule=SCHEDULE,",
            f"        declare={dict(session.declared)!r},",
            f"        adapter={session.adapter.as_dict()!r},",
            "    )",
            "    assert failure is None, failure",
            "",
        ]
    )


def torn(history: Sequence[Operation]) -> list[Operation]:
    """``history`` with every read batch of several keys (M9) made of its single ``contains``, each
    anywhere in the batch's interval (``contains_prefix(keys) -> n``: n hits, then the miss): the history
    of a cache whose read batches may tear and are otherwise right."""
    out: list[Operation] = []
    for op in history:
        keys = list(op.args)
        if op.name == "contains_many" and len(keys) > 1 and len(op.result) == len(keys):
            answers = zip(keys, op.result, strict=True)
            out += [Operation(op.thread, "contains", (k,), a, op.call, op.ret) for k, a in answers]
        elif op.name == "contains_prefix" and len(keys) > 1 and 0 < op.result <= len(keys):
            asked = keys[: op.result + 1]
            out += [
                Operation(op.thread, "contains", (k,), i < op.result, op.call, op.ret)
                for i, k in enumerate(asked)
            ]
        else:
            out.append(op)
    return out


def _clauses(world: World, found: FailingHistory, spec: Any, max_steps: int) -> list[str]:
    """M7 (C5); M9 first when some order explains the history once its batches may tear."""
    if found.verdict is not None and world.batches:
        relaxed = check_history(torn(found.run.history), spec, max_steps)
        if relaxed.linearizable:
            return ["M9", world.clause]
    return [world.clause]


def _one_at_a_time_clauses(session: Session, alone: FailingHistory) -> list[str]:
    """The clause of the call that diverges when the calls run one at a time: the first that raised, or
    that no order explains (its method's own clause; the component's constructor clause otherwise)."""
    history = alone.run.history
    explained = {id(op) for op in alone.verdict.stuck} if alone.verdict is not None else set()
    unexplained = alone.verdict is not None
    wrong = next(
        (op for op in history if isinstance(op.result, Raised) or (unexplained and id(op) not in explained)),
        None,
    )
    name = "__len__" if wrong is not None and wrong.name == "len" else wrong.name if wrong else ""
    own = session.component.method_clauses.get(name, ())
    return [own[0]] if own else [session.component.constructor_clause or "O5"]


def _message(world: World, found: FailingHistory, also: str = "") -> str:
    if found.kind == "timed out":
        head, _, stacks = found.detail.strip().partition("\n")
        return f"{world.clause}: a call never returned (a deadlock or a spin): {head}{also}\n{stacks}"
    if found.kind == "raised":
        return f"{world.clause}: an exception escaped a call under threads: {found.detail.strip()}"
    return f"{world.clause}: no order of the calls, respecting real time, gives these answers"


@dataclass
class ThreadsResult(OracleResult):
    """:class:`~spec.oracle.OracleResult` of ``--threads``: ``verdict`` is also ``"UNKNOWN"`` (exit 3);
    on FAIL, ``history`` is the failing history and ``unexplained`` the indices of its calls that no
    order explains (or that raised, or never returned), for ``--picture``."""

    history: list[Operation] = field(default_factory=list, repr=False, compare=False)
    unexplained: set[int] = field(default_factory=set, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out.pop("history", None)
        out.pop("unexplained", None)
        return out

    def picture_history(self) -> tuple[list[Operation], set[int]]:
        return self.history, self.unexplained

    def instants(self) -> list[float]:
        """Where the clock moved (its ``advance`` calls), on the history's time axis."""
        return [op.call for op in self.history if op.name == "advance"]


def _unexplained(found: FailingHistory) -> set[int]:
    history = found.run.history
    if found.kind == "not linearizable" and found.verdict is not None:
        explained = {id(op) for op in found.verdict.stuck}
        return {i for i, op in enumerate(history) if id(op) not in explained}
    return {i for i, op in enumerate(history) if op.ret is None or isinstance(op.result, Raised)}


def _unguarded(session: Session) -> None:
    """The workers call the target themselves: the sequential runs' call guard (one worker thread that
    makes every call, under the call timeout) would make them all from one thread.  Under threads the
    scheduler keeps the call timeout (``run_history``'s deadline)."""
    session.guard = CallGuard(None)


def _verify_control(session: Session, histories: int) -> None:
    """O4 under threads: the target read the clock the oracle holds it at, and used only the fake disk."""
    if session.time_control != "none" and histories and not session.holder.reads:
        raise OracleUsageError(
            "the target never read the clock the oracle controls under --threads: it reads the time some "
            "other way, so the oracle can neither hold it there nor run it on the fake clock. Give it a "
            'clock parameter, e.g. --adapter \'{"arguments": {"__init__": {"clock": "its_name"}}}\''
        )
    session.fs_control.verify(histories)


def check_threads(
    component: str,
    target: str | Callable[..., Any],
    *,
    threads: int = 4,
    seed: int = 0,
    histories: int = HISTORIES,
    max_steps: int = MAX_STEPS,
    call_timeout: float = CALL_TIMEOUT,
    adapter: Any = None,
    declare: Mapping[str, str] | None = None,
    leave_out: Sequence[str] = (),
    shrink_budget: int = 300,
    settings: Mapping[str, Any] | None = None,
    max_examples: int = 500,
) -> OracleResult:
    """``--threads``: ``histories`` histories of ``threads`` real threads on fresh targets, each checked
    linearizable against the spec (O6); an OracleResult (verdict PASS, FAIL or UNKNOWN).  ``settings``
    (file-store): every history runs the store with this configuration pinned (``--settings``).
    ``max_examples``: the budget of the sequential check that runs when the failing history's calls,
    made one at a time, already diverge (its clause is then the class's own, reported instead)."""
    from contextlib import ExitStack

    from spec.oracle._prepared import prepared
    from spec.oracle._result import Failure, failure_entry, report_fields
    from spec.oracle._run import check

    usage_check(component, threads)
    for name, value in (("histories", histories), ("max_steps", max_steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise OracleUsageError(f"{name} must be an int >= 1, got {value!r}")
    if not call_timeout > 0:
        raise OracleUsageError(f"call_timeout must be > 0, got {call_timeout!r}")
    world = worlds()[component]
    with ExitStack() as cleanup:
        run = cleanup.enter_context(
            prepared(
                component, target, adapter=adapter, declare=declare, leave_out=leave_out, settings=settings
            )
        )
        spec_component, session, target_path = run.component, run.session, run.target_path
        _unguarded(session)
        found, figures = search(
            session,
            world,
            threads=threads,
            histories=histories,
            seed=seed,
            max_steps=max_steps,
            call_timeout=call_timeout,
        )
        failures: list[Failure] = []
        note = also = ""
        blamed: list[str] = []
        if found is not None:
            alone = sequential_replay(session, world, found, max_steps=max_steps, call_timeout=call_timeout)
            if alone is not None and alone.kind != "timed out":
                # Wrong one call at a time: the class's own clause, found by the sequential check (O6).
                cleanup.close()
                sequential = check(
                    component,
                    target,
                    seed=seed,
                    max_examples=max_examples,
                    adapter=adapter,
                    declare=declare,
                    leave_out=leave_out,
                    call_timeout=call_timeout,
                    settings=settings,
                )
                if not sequential.passed:
                    sequential.figures["threads_histories"] = figures.histories
                    sequential.not_checked[world.clause] = (
                        "(not blamed: the calls of the failing threads history made one at a time already"
                        " diverge, so the class is wrong sequentially: reported above)"
                    )
                    return sequential
                note = " (the same calls one at a time diverge too; the sequential check found no clause)"
                blamed = _one_at_a_time_clauses(session, alone)
            elif alone is not None:  # a call never returns, one at a time too: a spin, M7 (C5) under threads
                also = " The same calls made one at a time never return either: not a race."
            elif found.kind != "timed out":
                found = _shrink(
                    session,
                    world,
                    found,
                    max_steps=max_steps,
                    call_timeout=call_timeout,
                    budget=shrink_budget,
                )
            config = {k: v for k, v in found.run.config.items() if k != "_seed"}
            # O10: a failure carries its clauses in every mode; the same calls one at a time diverging,
            # the clause of the call that diverged then, never the thread-safety clause
            clauses = blamed if note else _clauses(world, found, world.spec(config, session), max_steps)
            lines = render_history(found)
            repro = render_repro(component, target_path, found, clauses, session)
            calls = sum(op.name != "advance" for op in found.run.history)
            message = _message(world, found, also) + note
            failures.append(failure_entry(clauses, message, calls, lines, repro))
        _verify_control(session, figures.histories)
        verdict = "FAIL" if failures else "UNKNOWN" if figures.unknown else "PASS"
        covered: dict[str, Any] = {
            "threads": threads,
            "histories": figures.histories,
            "operations": figures.operations,
            "overlapping": figures.overlapping,
            "scheduling_decisions": figures.points,
            "search_steps": figures.search_steps,
            "unknown": figures.unknown,
            "seconds": figures.seconds,
        }
        fields, unchecked = report_fields(session, failures)
        result = ThreadsResult(target=target_path, verdict=verdict, seed=seed, figures=covered, **fields)
        # O8: what this mode checks is its clause (M9 too, with batches); the others, sequential clauses,
        # are the sequential run's, which --strict does not count here (as that run does not count M7).
        batches = any(session.offers(b) for b in world.batches)  # O10: called in this run
        mine = [world.clause, *(["M9"] if batches else [])]
        checked = spec_component.checked_clauses(session.declared)
        one_at_a_time = "(threads run: the sequential clauses; run without --threads for them)"
        result.not_checked = {c: one_at_a_time for c in checked if c not in mine and c not in unchecked}
        if found is not None:
            result.history = list(found.run.history)
            result.unexplained = _unexplained(found)
        if verdict == "UNKNOWN":
            result.message = (
                f"{figures.unknown} of {figures.histories} histories exhausted the search budget of"
                f" {max_steps} steps each: not checked, never passed"
            )
            exhausted = f"({figures.unknown} of {figures.histories} histories exhausted the search budget)"
            result.not_checked.update(dict.fromkeys(mine, exhausted))
        elif verdict == "PASS":
            result.passed_clauses = mine
        result.strict_gaps = {
            **unchecked,
            **{c: why for c, why in result.not_checked.items() if why != one_at_a_time},
        }
        return result


def replay_threads(
    component: str,
    target: str | Callable[..., Any],
    *,
    config: Mapping[str, Any],
    scripts: Sequence[Sequence[tuple[str, Sequence[Hashable]]]],
    schedule: Sequence[int],
    declare: Mapping[str, str] | None = None,
    adapter: Any = None,
    max_steps: int = MAX_STEPS,
    call_timeout: float = CALL_TIMEOUT,
) -> str | None:
    """Run ``scripts`` on ``target`` following ``schedule`` (a reproduction's); the failure, or None."""
    from spec.oracle._prepared import prepared

    world = worlds()[component]
    with prepared(component, target, adapter=adapter, declare=declare) as ready:
        session = ready.session
        _unguarded(session)
        plain = [[(str(n), tuple(a)) for n, a in s] for s in scripts]
        history = run_history(
            session, world, dict(config), plain, _first, replay=schedule, call_timeout=call_timeout
        )
        found, _ = judge(history, world.spec(dict(config), session), max_steps)
        if found is None:
            return None
        return "\n".join([_message(world, found), *render_history(found)])
