"""Deterministic stand-ins for the world: a clock that only moves when told to.

Correctness tests never sleep: they drive time through a FakeClock.  Threads meet where the test
says: :func:`meeting_point` marks a race window inside an operation, where the thread leading a
meeting of ``spec.linearizability.recording.Rendezvous`` lets the others make their calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["LEADER", "CountingClock", "FakeClock", "meeting_point"]


class _Leader(threading.local):
    """Per thread: the hold of the meeting the thread leads, inside its call (None: it leads none)."""

    hold: Callable[[], None] | None = None


LEADER = _Leader()  # set and cleared by Rendezvous around the leader's call


def meeting_point() -> None:
    """A point inside an operation where the leader of a meeting lets the other threads make their calls.

    A no-op unless the calling thread leads a ``Rendezvous`` meeting, inside its call, and has not
    held yet.  Put at a race window (``spec.variants.metadata_cache.RacyMetadataCache.add``), it
    forces the window open.
    """
    hold = LEADER.hold
    if hold is not None:
        hold()


class FakeClock:
    """A monotonic clock under the test's control; call it to read the time.

    >>> clock = FakeClock(10.0)
    >>> clock.advance(0.5); clock()
    10.5
    """

    __slots__ = ("now",)

    def __init__(self, start: float = 0.0) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (never backward: the clock is monotonic)."""
        if seconds < 0:
            raise ValueError(f"seconds must be >= 0, got {seconds!r}")
        self.now += seconds

    def set(self, when: float) -> None:
        """Move time forward to ``when``."""
        if when < self.now:
            raise ValueError(f"when must be >= the current time {self.now!r}, got {when!r}")
        self.now = float(when)


class CountingClock(FakeClock):
    """A FakeClock that counts its readings: an operation that is one instant reads it at most once (M9).

    >>> clock = CountingClock(1.0)
    >>> clock(), clock(), clock.reads
    (1.0, 1.0, 2)
    """

    __slots__ = ("reads",)

    def __init__(self, start: float = 0.0) -> None:
        super().__init__(start)
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now
