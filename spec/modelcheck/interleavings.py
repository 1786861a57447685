"""A deterministic scheduler for real threads, and the exploration of every schedule at its marked points.

Stateless model checking in the style of CHESS: the threads under test are real
threads, but only one runs at a time; it hands control back at *marked points*
(:meth:`ExploringScheduler.point`: every call into the fake filesystem and every acquisition
of the store's lock), and a *schedule* (a list of choices) picks who runs next, so
it fixes the whole interleaving and its replay reproduces the run exactly.

:func:`explore_schedules` enumerates every schedule depth-first, queueing at each
choice point every enabled thread not taken yet; without partial-order reduction,
the count is the full tree of interleavings at the marked points.  A thread that
would block on a :class:`ExploredLock` (an ``RLock`` stand-in) held by another is
not enabled until it is released; no enabled thread but a blocked one is a deadlock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ExploredLock", "ExploringScheduler", "ScheduleOutcome", "explore_schedules"]

TIMEOUT = 120.0  # seconds a scheduled run may take before it is declared hung (only a wedge: never load)


class ExploringScheduler:
    """Runs the given bodies on threads, one at a time, switching only at marked points."""

    def __init__(self, prefix: Sequence[int] = ()) -> None:
        self.prefix = list(prefix)
        self.choices: list[tuple[int, tuple[int, ...]]] = []  # (picked, enabled) at each real choice
        self.steps: list[str] = []  # "t<i>: <label>" for every resumption, for counterexamples
        self.deadlock = False
        self._cv = threading.Condition()
        self._label: dict[int, str] = {}  # every thread's, at its last marked point
        self._blocked_on: dict[int, object] = {}
        self._done: set[int] = set()
        self._running: int | None = None
        self._index: dict[int, int] = {}  # thread ident -> index

    def current(self) -> int | None:
        """The index of the calling thread, or None for a thread not under the scheduler."""
        return self._index.get(threading.get_ident())

    def run(self, bodies: Sequence[Callable[[], None]]) -> list[BaseException]:
        """Run ``bodies`` to completion under the schedule; the exceptions they raised."""
        errors: list[BaseException] = []
        threads = [
            threading.Thread(target=self._main, args=(i, body, errors)) for i, body in enumerate(bodies)
        ]
        with self._cv:
            self._label = dict.fromkeys(range(len(bodies)), "start")
        for t in threads:
            t.start()
        with self._cv:
            self._cv.wait_for(lambda: len(self._index) == len(bodies), timeout=TIMEOUT)
            self._choose()
        for t in threads:
            t.join(timeout=TIMEOUT)
            if t.is_alive():
                raise RuntimeError(f"a scheduled thread hung; steps so far: {self.steps}")
        return errors

    def point(self, label: str = "") -> None:
        """A marked point: the running thread lets the schedule decide who runs next."""
        me = self.current()
        if me is None:
            return
        with self._cv:
            self._label[me] = label
            self._choose()
            self._cv.wait_for(lambda: self._running == me)

    def block(self, resource: object, label: str) -> None:
        """The running thread cannot go on until ``resource`` is released."""
        me = self.current()
        assert me is not None
        with self._cv:
            self._blocked_on[me], self._label[me] = resource, label
            self._choose()
            self._cv.wait_for(lambda: self._running == me)

    def release(self, resource: object) -> None:
        """``resource`` is free: the threads blocked on it are enabled again."""
        with self._cv:
            self._blocked_on = {i: r for i, r in self._blocked_on.items() if r is not resource}

    def _main(self, me: int, body: Callable[[], None], errors: list[BaseException]) -> None:
        with self._cv:
            self._index[threading.get_ident()] = me
            self._cv.notify_all()
            self._cv.wait_for(lambda: self._running == me)
        try:
            body()
        except AssertionError as exc:  # a check inside the body failed: reported with the schedule
            errors.append(exc)
        finally:
            with self._cv:
                self._done.add(me)
                self._choose()

    def _choose(self) -> None:
        """Pick the next thread to run (condition held)."""
        enabled = tuple(i for i in sorted(self._label) if i not in self._done and i not in self._blocked_on)
        if not enabled:
            self.deadlock = bool(self._blocked_on)
            self._running = None
        elif len(enabled) == 1:
            self._running = enabled[0]
        else:
            k = len(self.choices)
            pick = self.prefix[k] if k < len(self.prefix) else enabled[0]
            if pick not in enabled:
                raise RuntimeError(f"schedule {self.prefix} is not replayable at choice {k}: {enabled}")
            self.choices.append((pick, enabled))
            self._running = pick
        if self._running is not None:
            self.steps.append(f"t{self._running}: {self._label[self._running]}")
        self._cv.notify_all()


class ExploredLock:
    """A re-entrant lock whose acquisitions are marked points; contention blocks under the scheduler."""

    def __init__(self, scheduler: ExploringScheduler) -> None:
        self._scheduler = scheduler
        self._owner: int | None = None
        self._count = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        me = self._scheduler.current()
        if me is None:  # set-up or final checks on the main thread: no scheduled thread is running
            me = -1
        else:
            self._scheduler.point("acquire lock")
        while self._owner not in (None, me):
            self._scheduler.block(self, "waits for the lock")
        self._owner = me
        self._count += 1
        return True

    def release(self) -> None:
        self._count -= 1
        if self._count == 0:
            self._owner = None
            self._scheduler.release(self)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class ScheduleOutcome:
    """What one exploration found."""

    schedules: int = 0
    max_choices: int = 0
    outcomes: set[Any] = field(default_factory=set)  # distinct final states
    violation: tuple[list[int], list[str], str] | None = None  # schedule, steps, what went wrong


def explore_schedules(
    run_once: Callable[[ExploringScheduler], tuple[Any, str | None]], *, limit: int = 100_000
) -> ScheduleOutcome:
    """Run ``run_once`` under every schedule (depth-first); stop at the first violation.

    ``run_once(scheduler)`` sets up a fresh world, runs its threads with
    ``scheduler.run(...)`` and returns (a hashable final state, a violation
    message or None).
    """
    outcome = ScheduleOutcome()
    pending: list[list[int]] = [[]]
    while pending and outcome.schedules < limit:
        prefix = pending.pop()
        scheduler = ExploringScheduler(prefix)
        final, problem = run_once(scheduler)
        if scheduler.deadlock:
            problem = problem or "deadlock: every thread is blocked"
        outcome.schedules += 1
        outcome.max_choices = max(outcome.max_choices, len(scheduler.choices))
        outcome.outcomes.add(final)
        taken = [pick for pick, _ in scheduler.choices]
        if problem is not None:
            outcome.violation = (taken, scheduler.steps, problem)
            return outcome
        for k in range(len(scheduler.choices) - 1, len(prefix) - 1, -1):
            pick, enabled = scheduler.choices[k]
            pending.extend([*taken[:k], alternative] for alternative in enabled if alternative > pick)
    return outcome
