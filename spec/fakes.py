"""Deterministic stand-ins for the world: a clock that only moves when told to.

Correctness tests never sleep: they drive time through a FakeClock.
"""

from __future__ import annotations

__all__ = ["CountingClock", "FakeClock"]


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
