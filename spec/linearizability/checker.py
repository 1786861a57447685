"""Linearizability of recorded histories: Wing & Gong's search with Lowe's memoization.

A *history* is the list of operations real threads performed, each with the
time it was called and the time it returned (``time.perf_counter_ns``).  It is
*linearizable* against a sequential spec when some total order of the
operations (1) respects real time: an operation that returned before another
was called comes first, and (2) replayed one by one through the spec gives
every recorded answer.

The search (as in Lowe, "Testing for linearizability", 2017, and porcupine):
the call and return events sit in one time-ordered linked list.  Walking it,
a call whose operation the spec accepts in the current state is *lifted* (it
and its return leave the list: it is linearized here) and the walk restarts
from the head; meeting a return means that operation had to be linearized
already, so the search backtracks (re-inserts the last lifted operation and
tries the next candidate).  Lowe's memoization: a pair (set of linearized
operations, spec state) seen once is never explored again, which turns the
exponential worst case into one bounded by the distinct configurations.

The search runs under a budget of search steps (not seconds, so that the verdict
does not depend on the machine's load); past it the verdict is *unknown*, never a
silent pass.  Real threads may run one after another and so check nothing
concurrent: :class:`Rendezvous` makes some calls overlap by construction.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from spec.fakes import LEADER, meeting_point

__all__ = [
    "MAX_STEPS",
    "SAFETY_TIMEOUT",
    "HistoryRecorder",
    "Operation",
    "Rendezvous",
    "RendezvousError",
    "SequentialSpec",
    "Verdict",
    "check_history",
    "meeting_point",
    "meetings_of",
    "run_threads",
]

S = TypeVar("S", bound=Hashable)
Call = tuple[str, tuple[Hashable, ...]]  # a method's name and its arguments: one step of a script
Around = Callable[[Callable[[], Any]], Any]  # runs a call (HistoryRecorder.perform)

# Search steps before the verdict is "unknown".  The histories of the tests (3 threads, up to 25 calls
# each) take at most a few thousand; the bound only stops a pathological search, and it is a count, so
# the same history gets the same verdict on any machine under any load.
MAX_STEPS = 5_000_000
# Seconds a thread waits at a rendezvous before the run is declared broken (a thread died or a script
# is shorter than the meetings assume).  Only ever reached when something is wedged: never a verdict.
SAFETY_TIMEOUT = 120.0


@dataclass(frozen=True)
class Operation:
    """One call of one thread: what it asked, what it got, and when (ns, one monotonic clock)."""

    thread: int
    name: str
    args: tuple[Hashable, ...]
    result: Any
    call: int
    ret: int

    def __str__(self) -> str:
        args = ", ".join(repr(a) for a in self.args)
        return f"t{self.thread}: {self.name}({args}) -> {self.result!r}  [{self.call}..{self.ret}]"


class SequentialSpec(Protocol[S]):
    """The spec as a pure step function over hashable states.

    A spec that allows several outcomes for one operation (a nondeterministic
    spec) also defines ``outcomes(state, name, args) -> list[(state, answer)]``;
    the search then tries each outcome that gives the recorded answer.
    """

    @property
    def initial(self) -> S: ...

    def step(self, state: S, name: str, args: tuple[Hashable, ...]) -> tuple[S, Any]:
        """The state after the operation and the answer the spec gives."""
        ...


class HistoryRecorder:
    """Records the operations threads perform on a target, with call and return times.

    ``perform`` reads the clock, calls the method, reads the clock again and
    appends the record (``list.append`` is atomic in CPython: no lock of ours
    narrows the interleavings under test).
    """

    def __init__(self, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.operations: list[Operation] = []
        self._clock = clock

    def perform(
        self, thread: int, target: Any, name: str, *args: Hashable, around: Around | None = None
    ) -> Any:
        """Call ``target.name(*args)`` and record it; ``around(call)``, if given, runs the call
        between the two clock reads (a rendezvous inside the recorded interval)."""
        method = getattr(target, name)
        call = self._clock()
        result = method(*args) if around is None else around(lambda: method(*args))
        ret = self._clock()
        self.operations.append(Operation(thread, name, args, result, call, ret))
        return result


@dataclass
class Verdict:
    """The outcome of one check: linearizable True/False, or None when the step budget ran out."""

    linearizable: bool | None
    operations: int
    threads: int
    steps: int = 0  # search steps (call events tried and backtracks)
    configurations: int = 0  # distinct (linearized set, state) pairs memoized
    seconds: float = 0.0
    linearization: list[Operation] = field(default_factory=list)  # a witness, when linearizable
    stuck: list[Operation] = field(default_factory=list)  # the longest linearizable prefix otherwise

    def explain(self) -> str:
        if self.linearizable:
            return f"linearizable ({self.operations} operations, {self.steps} search steps)"
        if self.linearizable is None:
            return f"unknown: step budget exhausted after {self.steps} search steps"
        prefix = "\n".join(f"    {op}" for op in self.stuck)
        return (
            f"NOT linearizable ({self.operations} operations): no order extends this longest"
            f" linearizable prefix\n{prefix}"
        )


class _Event:
    __slots__ = ("index", "is_call", "match", "next", "prev")

    def __init__(self, index: int, is_call: bool) -> None:
        self.index = index
        self.is_call = is_call
        self.match: _Event | None = None
        self.prev: _Event | None = None
        self.next: _Event | None = None


def _event_list(history: Sequence[Operation]) -> _Event:
    """The events in time order behind a head sentinel; at equal times calls come first."""
    order = sorted(
        [(op.call, 0, i) for i, op in enumerate(history)] + [(op.ret, 1, i) for i, op in enumerate(history)]
    )
    head = _Event(-1, False)
    calls: dict[int, _Event] = {}
    last = head
    for _, kind, index in order:
        event = _Event(index, kind == 0)
        if kind == 0:
            calls[index] = event
        else:
            calls[index].match = event
        event.prev, last.next = last, event
        last = event
    return head


def _lift(call: _Event) -> None:
    """Take ``call`` and its return out of the list; each keeps its own links, for :func:`_unlift`."""
    for event in (call, call.match):
        assert event is not None and event.prev is not None
        event.prev.next = event.next
        if event.next is not None:
            event.next.prev = event.prev


def _unlift(call: _Event) -> None:
    """Put back what the last :func:`_lift` took out, in the reverse order (dancing links)."""
    for event in (call.match, call):
        assert event is not None and event.prev is not None
        event.prev.next = event
        if event.next is not None:
            event.next.prev = event


def check_history(
    history: Sequence[Operation], spec: SequentialSpec[S], max_steps: int = MAX_STEPS
) -> Verdict:
    """Whether ``history`` is linearizable against ``spec`` (None: unknown within ``max_steps`` steps).

    The budget is a number of search steps, so the verdict is a function of the
    history alone (``seconds`` is only reported).
    """
    start = time.perf_counter()
    verdict = Verdict(None, len(history), len({op.thread for op in history}))
    head = _event_list(history)
    state: S = spec.initial
    linearized = 0
    memo: set[tuple[int, S]] = set()
    stack: list[tuple[_Event, S, list[S]]] = []  # lifted call, state before it, alternatives left
    longest: list[int] = []
    outcomes = getattr(spec, "outcomes", None)
    entry = head.next
    while head.next is not None:
        if verdict.steps >= max_steps:
            break
        verdict.steps += 1
        assert entry is not None
        lifting = entry.is_call
        if lifting:  # try to linearize this operation here: the states after it that give its answer
            op = history[entry.index]
            results = outcomes(state, op.name, op.args) if outcomes else [spec.step(state, op.name, op.args)]
            candidates = [after for after, answer in results if answer == op.result]
        elif stack:  # a return: backtrack, to another outcome of the last lifted operation or past it
            entry, state, candidates = stack.pop()
            linearized &= ~(1 << entry.index)
        else:
            verdict.linearizable = False
            break
        bit = 1 << entry.index
        fresh = [after for after in candidates if (linearized | bit, after) not in memo]
        if fresh:
            memo.add((linearized | bit, fresh[0]))
            stack.append((entry, state, fresh[1:]))
            state, linearized = fresh[0], linearized | bit
            if lifting:
                _lift(entry)
                if len(stack) > len(longest):
                    longest = [e.index for e, _, _ in stack]
            entry = head.next
            continue
        if not lifting:
            _unlift(entry)
        entry = entry.next
    else:
        verdict.linearizable = True
        verdict.linearization = [history[e.index] for e, _, _ in stack]
    if verdict.linearizable is False:
        verdict.stuck = [history[i] for i in longest]
    verdict.configurations = len(memo)
    verdict.seconds = time.perf_counter() - start
    return verdict


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
