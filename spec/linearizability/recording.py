"""Recording real threads, and making their calls overlap by construction.

:class:`HistoryRecorder` times each call a thread makes on a target and keeps
the :class:`~spec.linearizability.checker.Operation`; :class:`Rendezvous` and
:func:`run_threads` run one script per thread so that some calls of different
threads overlap whatever the speed or load of the machine (real threads may
otherwise run one after another and check nothing concurrent).  The search that
judges the recorded history is :mod:`spec.linearizability.checker`.
"""

from __future__ import annotations

import functools
import threading
import time
import traceback
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from ..world.clock import LEADER, meeting_point
from .checker import Operation, Raised

__all__ = [
    "SAFETY_TIMEOUT",
    "HistoryRecorder",
    "Rendezvous",
    "RendezvousError",
    "meeting_point",
    "meetings_of",
    "run_threads",
]

Call = tuple[str, tuple[Hashable, ...]]  # a method's name and its arguments: one step of a script
Around = Callable[[Callable[[], Any]], Any]  # runs a call (HistoryRecorder.perform)

# Seconds a thread waits at a rendezvous before the run is declared broken (a thread died or a script
# is shorter than the meetings assume).  Only ever reached when something is wedged: never a verdict.
SAFETY_TIMEOUT = 120.0


class HistoryRecorder:
    """Records the operations threads perform on a target, with call and return times.

    ``perform`` reads the clock, calls the method, reads the clock again and
    appends the record (``list.append`` is atomic in CPython: no lock of ours
    narrows the interleavings under test).  With ``keep_exceptions``, an
    exception escaping the call is recorded as its answer (a
    :class:`~spec.linearizability.checker.Raised` with the traceback as its
    detail) and returned, instead of ending the thread's script.
    """

    def __init__(
        self, clock: Callable[[], int] = time.perf_counter_ns, *, keep_exceptions: bool = False
    ) -> None:
        self.operations: list[Operation] = []
        self._clock = clock
        self.keep_exceptions = keep_exceptions

    def perform(
        self, thread: int, target: Any, name: str, *args: Hashable, around: Around | None = None
    ) -> Any:
        """Call ``target.name(*args)`` and record it; ``around(call)``, if given, runs the call
        between the two clock reads (a rendezvous inside the recorded interval)."""
        method = getattr(target, name)
        call = self._clock()
        try:
            result = method(*args) if around is None else around(lambda: method(*args))
        except Exception as exc:
            if not self.keep_exceptions:
                raise
            result = Raised(type(exc).__name__, traceback.format_exc())
        ret = self._clock()
        self.operations.append(Operation(thread, name, args, result, call, ret))
        return result


class RendezvousError(RuntimeError):
    """A rendezvous was broken: a thread failed, or did not arrive within the safety timeout."""


_current = threading.local()  # the meeting the calling thread leads, and whether it has held


class Rendezvous:
    """Calls of real threads made to overlap by construction, whatever the speed or load of the machine.

    At each meeting (call indices 0, ``every``, 2 ``every``... below the shortest
    script's length) the threads' calls at that index happen in a fixed order:

    1. thread 0 (the leader) makes its call, up to its :func:`meeting_point`
       (or the end of the call, if the operation has none), and holds there,
       *inside* its recorded interval;
    2. the other threads then make their calls one after another, in thread
       order, each starting after the previous one returned (their intervals
       are as tight as the calls: real-time order between them is recorded);
    3. the leader goes on and returns.

    So each follower's meeting call lies inside the leader's, for certain.  Between
    meetings the threads run free.  It cannot deadlock: followers wait only for the
    leader's hold and the follower before them, the leader only for the followers,
    and every thread reaches every meeting.  A thread that fails calls :meth:`abort`,
    which wakes every waiter with :class:`RendezvousError`; so does a wait past ``timeout``.
    """

    def __init__(self, threads: int, every: int, shortest: int, timeout: float = SAFETY_TIMEOUT) -> None:
        if threads < 1 or every < 1:
            raise ValueError(f"threads and every must be >= 1, got {threads} and {every}")
        self.threads, self.every, self.shortest, self.timeout = threads, every, shortest, timeout
        self.meetings = 0  # meetings completed
        self._cv = threading.Condition()
        self._turn = (-1, 0)  # (meeting, whose turn): 1..threads-1 a follower's, `threads` the leader's
        self._broken = False

    def meets(self, index: int) -> bool:
        """Whether the calls at ``index`` of the scripts are a meeting."""
        return index < self.shortest and index % self.every == 0

    def abort(self) -> None:
        with self._cv:
            self._broken = True
            self._cv.notify_all()

    def _wait_for(self, turn: tuple[int, int]) -> None:
        """Wait (lock held) until it is ``turn``; RendezvousError if broken or timed out."""
        if not self._cv.wait_for(lambda: self._broken or self._turn == turn, timeout=self.timeout):
            self._broken = True
            self._cv.notify_all()
            raise RendezvousError(f"no thread gave turn {turn} within {self.timeout} s (now {self._turn})")
        if self._broken:
            raise RendezvousError(f"the rendezvous was broken while waiting for turn {turn}")

    def _pass(self, turn: tuple[int, int]) -> None:
        with self._cv:
            self._turn = turn
            self._cv.notify_all()

    def lead(self, meeting: int) -> Around:
        """The leader's ``around`` for its call at ``meeting`` (see :meth:`HistoryRecorder.perform`)."""

        def around(call: Callable[[], Any]) -> Any:
            _current.meeting, _current.held, LEADER.hold = meeting, False, self.hold
            try:
                result = call()
                self.hold()  # no meeting point inside the operation: the followers go after it
            finally:
                LEADER.hold = None
            return result

        return around

    def hold(self) -> None:
        """The leader, inside its call: let the followers make their calls, then go on (once per call)."""
        if _current.held:
            return
        _current.held = True
        meeting = _current.meeting
        self._pass((meeting, 1))
        with self._cv:
            self._wait_for((meeting, self.threads))
            self.meetings += 1

    def follow(self, thread: int, meeting: int, call: Callable[[], Any]) -> Any:
        """A follower's call at ``meeting``: after the leader's hold and the previous follower's return."""
        with self._cv:
            self._wait_for((meeting, thread))
        result = call()
        self._pass((meeting, thread + 1))
        return result


def meetings_of(scripts: Sequence[Sequence[object]], meet_every: int | None) -> int:
    """How many meetings :func:`run_threads` holds for ``scripts`` (0 without meetings or other threads)."""
    if meet_every is None or len(scripts) < 2:
        return 0
    return len(range(0, min(len(s) for s in scripts), meet_every))


def run_threads(
    recorder: HistoryRecorder,
    target: Any,
    scripts: Sequence[Sequence[Call]],
    *,
    meet_every: int | None = None,
) -> list[Operation]:
    """Run one thread per script against ``target`` (all released at once); the recorded history.

    ``meet_every``: the threads meet (:class:`Rendezvous`) at every ``meet_every``-th
    call index, so that some of the recorded calls overlap by construction.  An
    exception in a thread breaks the rendezvous and is raised here after all
    threads ended.
    """
    start = threading.Barrier(len(scripts), timeout=SAFETY_TIMEOUT)
    shortest = min((len(s) for s in scripts), default=0)
    rendezvous = Rendezvous(len(scripts), meet_every, shortest) if meet_every is not None else None
    errors: list[BaseException] = []

    def worker(thread: int, script: Sequence[Call]) -> None:
        try:
            start.wait()
            for index, (name, args) in enumerate(script):
                if rendezvous is None or not rendezvous.meets(index):
                    recorder.perform(thread, target, name, *args)
                elif thread == 0:
                    recorder.perform(thread, target, name, *args, around=rendezvous.lead(index))
                else:
                    call = functools.partial(recorder.perform, thread, target, name, *args)
                    rendezvous.follow(thread, index, call)
        except BaseException as exc:  # reaches the caller; the others are woken, not left waiting
            errors.append(exc)
            start.abort()
            if rendezvous is not None:
                rendezvous.abort()

    threads = [threading.Thread(target=worker, args=(i, s)) for i, s in enumerate(scripts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return list(recorder.operations)
