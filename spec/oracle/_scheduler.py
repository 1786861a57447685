"""The oracle's scheduler for real threads: one worker runs at a time, and a seeded choice picks who goes on.

The target's own scheduling points are the oracle's: every read of the clock the oracle controls (passed
in or patched in, :mod:`spec.oracle._time`, through :class:`ScheduledClock`) and, for a file store, every
operation on its fake filesystem (before and after it, :mod:`spec.oracle._fs` and the port's hooks).  A
:class:`Scheduler` lets one worker thread run at a time: at each point the worker parks and the
scheduler, from a seeded random generator (:class:`HoldingChooser`), picks which parked worker goes on.
So a thread is held *inside* its call (between what the target read before the clock and what it does
after) while the others call.

A held thread may hold the target's own lock.  The locks the target makes are the scheduler's (its
modules' ``threading.Lock``/``RLock`` are interposed for the run, :class:`ScheduledLock`,
:func:`interpose_locks`): a worker that would block on one parks instead and is picked only once the lock
is free, so the others wait on a held worker's lock where the scheduler sees them, and when every worker
left waits for a lock another holds, that is a deadlock, reported at once.  A lock made elsewhere (at
import, in a C extension) still blocks for real: then a worker the scheduler did not park, that has not
finished, and whose top frame stands still at a call into C (``with lock:``, ``lock.acquire()``) over
consecutive looks while the scheduler holds the interpreter lock is taken as blocked, and another parked
worker is picked.  The schedule (the worker picked at each decision) is recorded and replayed by the
reproduction.
"""

from __future__ import annotations

import dis
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..world.clock import FakeClock
from ._timeout import current_frames

__all__ = [
    "HoldingChooser",
    "Schedule",
    "ScheduledClock",
    "ScheduledLock",
    "Scheduler",
    "ThreadCallTimedOut",
    "WorkerStopped",
    "interpose_locks",
    "lowest_parked",
    "random_chooser",
]

SWITCH_AT_A_POINT = 0.5  # the chance that a point inside a call hands over to another thread
POLL = 0.0002  # seconds between two looks at threads the scheduler neither parked nor saw finish
STILL_LOOKS = 3  # consecutive looks at an unmoved frame in a call into C: the thread is blocked
_C_CALLS = frozenset(dis.opmap[name] for name in ("BEFORE_WITH", "CALL", "PRECALL") if name in dis.opmap)
_local = threading.local()  # the worker index of the calling thread (absent: not a worker)


class WorkerStopped(BaseException):
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

    def enter(self, index: int) -> None:
        """Make the calling thread worker ``index`` of this scheduler (its points park it from now on)."""
        _local.index, _local.scheduler = index, self

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
                raise WorkerStopped  # the run is over: the worker ends here

    def wait_lock(self, lock: ScheduledLock) -> None:
        """Park the calling worker until it is picked with ``lock`` free (picked only then)."""
        index = getattr(_local, "index", None)
        if index is None:
            return
        with self._mutex:
            self.waiting[index] = lock
            self.parked[index] = lock.waits
            self._hand_over()
            turn = self._turns[index]
            while self.granted != index and not self.aborted:
                turn.wait()
            self.parked.pop(index, None)
            self.waiting.pop(index, None)
            self.granted = None

    def wake_waiters(self, lock: ScheduledLock) -> None:
        """``lock`` was released: the workers waiting for it may be picked again even if it is taken again
        before they are (each then finds it held and waits anew).  The model checker's exploration counts
        its schedules so; the oracle's own locks leave a waiter parked until the lock is free."""
        with self._mutex:
            self.waiting = {i: held for i, held in self.waiting.items() if held is not lock}

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


def lowest_parked(ready: list[int], last: int | None, where: str) -> int:
    """The chooser of a replay past its schedule: the lowest parked worker."""
    return ready[0]


class ScheduledLock:
    """A lock of the target's, made by the oracle: its modules' ``threading.Lock``/``RLock`` are
    interposed for the run (:func:`interpose_locks`).  A worker that would block on it parks instead
    (:meth:`Scheduler.wait_lock`) and is picked only once it is free, so a worker never waits where the
    scheduler cannot see it, and the schedule alone fixes the history.  Outside the workers (the target
    built in the main thread) it is a plain lock."""

    waits = "lock"  # where a worker waiting for it is parked (what a chooser and a trail read)

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
                raise WorkerStopped  # the run is over (a deadlock, a call past its time): the worker ends
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


class ScheduledClock:
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
