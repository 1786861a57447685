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

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..oracle._scheduler import ScheduledLock, Scheduler, ThreadCallTimedOut, WorkerStopped

__all__ = ["ExploredLock", "ExploringScheduler", "ScheduleOutcome", "explore_schedules"]

TIMEOUT = 120.0  # seconds a scheduled run may take before it is declared hung (only a wedge: never load)


class ExploringScheduler:
    """Runs the given bodies on threads, one at a time, switching only at marked points, following a
    prefix of choices: the project's one scheduler (the oracle's, :class:`spec.oracle._scheduler.Scheduler`)
    with a chooser that takes ``prefix``'s choice (then the lowest enabled thread) and records every real
    choice (more than one thread enabled) with the threads it chose among."""

    def __init__(self, prefix: Sequence[int] = ()) -> None:
        self.prefix = list(prefix)
        self.choices: list[tuple[int, tuple[int, ...]]] = []  # (picked, enabled) at each real choice
        self.steps: list[str] = []  # "t<i>: <label>" for every resumption, for counterexamples
        self.deadlock = False
        self._scheduler: Scheduler | None = None

    def point(self, label: str = "") -> None:
        """A marked point: the running thread lets the schedule decide who runs next (a no-op outside the
        threads of :meth:`run`)."""
        if self._scheduler is not None:
            self._scheduler.point(label)

    def released(self, lock: ScheduledLock) -> None:
        """``lock`` is free: the threads blocked on it are enabled again."""
        if self._scheduler is not None:
            self._scheduler.wake_waiters(lock)

    def _choose(self, ready: list[int], last: int | None, where: str) -> int:
        """Pick the next thread among the enabled (under the scheduler's mutex)."""
        assert self._scheduler is not None
        pick = ready[0]
        if len(ready) > 1:
            k = len(self.choices)
            pick = self.prefix[k] if k < len(self.prefix) else ready[0]
            if pick not in ready:
                raise RuntimeError(f"schedule {self.prefix} is not replayable at choice {k}: {tuple(ready)}")
            self.choices.append((pick, tuple(ready)))
        self.steps.append(f"t{pick}: {self._scheduler.parked[pick]}")
        return pick

    def run(self, bodies: Sequence[Callable[[], None]]) -> list[BaseException]:
        """Run ``bodies`` to completion under the schedule; the exceptions they raised (a failed check)."""
        errors: list[BaseException] = []
        scheduler = self._scheduler = Scheduler(len(bodies), self._choose)

        def main(index: int, body: Callable[[], None]) -> None:
            scheduler.enter(index)
            try:
                scheduler.point("start")
                body()
            except AssertionError as exc:  # a check inside the body failed: reported with the schedule
                errors.append(exc)
            except WorkerStopped:
                pass  # the run ended in a deadlock: this thread waited for a lock another holds
            finally:
                scheduler.finished(index)

        threads = [
            threading.Thread(target=main, args=(i, body), daemon=True) for i, body in enumerate(bodies)
        ]
        started = time.monotonic()

        def deadline() -> None:
            if time.monotonic() - started > TIMEOUT:
                scheduler.abort()
                raise RuntimeError(f"a scheduled thread hung; steps so far: {self.steps}")

        old = sys.getswitchinterval()
        sys.setswitchinterval(1.0)  # threads switch only when one blocks: one runs between two points
        try:
            for index, thread in enumerate(threads):
                thread.start()
                scheduler.idents[index] = thread.ident or -1
            scheduler.run(deadline)
        except ThreadCallTimedOut:  # every thread left waits for a lock another holds
            self.deadlock = True
            scheduler.abort()
        finally:
            sys.setswitchinterval(old)
            self._scheduler = None
        for thread in threads:
            thread.join(timeout=TIMEOUT)
            if thread.is_alive():
                raise RuntimeError(f"a scheduled thread hung; steps so far: {self.steps}")
        return errors


class ExploredLock(ScheduledLock):
    """A re-entrant lock whose acquisitions are marked points; contention parks the thread under the
    scheduler until the lock is free (the oracle's :class:`~spec.oracle._scheduler.ScheduledLock`)."""

    waits = "waits for the lock"

    def __init__(self, scheduler: ExploringScheduler) -> None:
        super().__init__(reentrant=True)
        self._exploring = scheduler

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        self._exploring.point("acquire lock")
        return super().acquire(blocking, timeout)

    __enter__ = acquire

    def release(self) -> None:
        super().release()
        if self.owner is None:  # the threads blocked on it are enabled again (each re-checks it)
            self._exploring.released(self)


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
