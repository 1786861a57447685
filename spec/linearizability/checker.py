"""Linearizability of recorded histories: Wing & Gong's search with Lowe's memoization.

A *history* is the list of operations threads performed, each with the time
it was called and the time it returned.  It is *linearizable* against a
sequential spec when some total order of the operations (1) respects real
time: an operation that returned before another was called comes first, and
(2) replayed one by one through the spec gives every recorded answer.

The search (as in Lowe, "Testing for linearizability", 2017, and porcupine):
the call and return events sit in one time-ordered linked list.  Walking it,
a call whose operation the spec accepts in the current state is *lifted* (it
and its return leave the list: it is linearized here) and the walk restarts
from the head; meeting a return means that operation had to be linearized
already, so the search backtracks (re-inserts the last lifted operation and
tries the next candidate).  Lowe's memoization: a pair (set of linearized
operations, spec state) seen once is never explored again, which turns the
exponential worst case into one bounded by the distinct configurations.

This module is the search only; recording real threads and scheduling them
is :mod:`spec.linearizability.recording`.  What a spec may add to the two
members every spec has (``initial``, ``step``), all optional:

* ``outcomes(state, name, args)``: several (state, answer) pairs (a
  nondeterministic spec); the search tries each one that gives the answer;
* ``outcomes_at(state, op)``: the same for a *timed* spec (O7), which is given
  the whole operation: its interval and its recorded ``now``.  Its state
  carries the last instant: :func:`instants` picks instants to try, for a spec
  whose answers change only at known instants, or the state keeps every
  assignment still possible as a zone (:mod:`spec.linearizability.timed`);
* ``accepts(recorded, answer) -> bool``: whether a recorded answer is the
  spec's (JSON gives lists for tuples; default ``==``);
* ``prepare(history) -> history``: the operations the spec steps (a store's
  ``set`` in its phases); :func:`check_history` applies it first.

Two kinds of recorded answers are not values: :class:`Raised` (the call
raised; the spec's answer is then the exception its step raises, compared by
type name) and :data:`PENDING` results of calls that never returned
(``ret is None``): such a call may take effect at any point after its call,
or never, and any answer is accepted.

The search runs under a budget of search steps (not seconds, so that the verdict
does not depend on the machine's load); past it the verdict is *unknown*, never a
silent pass.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

__all__ = [
    "MAX_STEPS",
    "PENDING",
    "Operation",
    "Raised",
    "SequentialSpec",
    "Verdict",
    "check_history",
    "instants",
]

S = TypeVar("S", bound=Hashable)

# Search steps before the verdict is "unknown".  The histories of the tests (3 threads, up to 25 calls
# each) take at most a few thousand; the bound only stops a pathological search, and it is a count, so
# the same history gets the same verdict on any machine under any load.
MAX_STEPS = 5_000_000


@dataclass(frozen=True)
class Raised:
    """A recorded answer that is an exception: its type name (and, for reports, its text)."""

    name: str
    detail: str = field(default="", compare=False)

    def __repr__(self) -> str:
        return f"raised {self.name}"


class _Pending:
    """The result of a call that never returned."""

    def __repr__(self) -> str:
        return "(never returned)"


PENDING: Any = _Pending()


@dataclass(frozen=True)
class Operation:
    """One call of one thread: what it asked, what it got, and when (one monotonic clock, any unit).

    ``ret`` None: the call never returned (its ``result`` is :data:`PENDING`).  ``now``: the
    instant the call read, when recorded (a timed spec pins the call there).  ``line``: where the
    operation came from (a trace's line number), kept through ``prepare``, for reports.
    """

    thread: int | str
    name: str
    args: tuple[Hashable, ...]
    result: Any
    call: float
    ret: float | None
    now: float | None = None
    line: int | None = field(default=None, compare=False)

    @property
    def returned(self) -> bool:
        return self.ret is not None

    @property
    def end(self) -> float:
        """The return time, or infinity for a call that never returned."""
        return math.inf if self.ret is None else self.ret

    def __str__(self) -> str:
        args = ", ".join(repr(a) for a in self.args)
        end = "..." if self.ret is None else self.ret
        at = "" if self.now is None else f" now={self.now}"
        return f"t{self.thread}: {self.name}({args}) -> {self.result!r}  [{self.call}..{end}]{at}"


class SequentialSpec(Protocol[S]):
    """The spec as a pure step function over hashable states (optional members: module docstring)."""

    @property
    def initial(self) -> S: ...

    def step(self, state: S, name: str, args: tuple[Hashable, ...]) -> tuple[S, Any]:
        """The state after the operation and the answer the spec gives."""
        ...


def instants(clock: float, op: Operation, breakpoints: Iterable[float] = ()) -> list[float]:
    """The instants a timed spec tries for ``op`` after a state at ``clock`` (O7).

    The instant lies in [invoke, return] and not before ``clock`` (instants do not
    decrease along the order).  A recorded ``now`` is the only candidate (none if it
    is out of range).  Otherwise: the earliest instant, each ``breakpoint`` inside
    the range (where the spec's answers or states change: a life's last instant and
    the one after it), and the latest.
    """
    low = max(clock, op.call)
    high = op.end
    if op.now is not None:
        return [op.now] if low <= op.now <= high else []
    if low > high:
        return []
    inside = sorted({b for b in breakpoints if low < b < high})
    return [low, *inside] + ([high] if high > low and high != math.inf else [])


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
    """The events in time order behind a head sentinel; at equal times calls come first.

    A call that never returned has its return after every other event.
    """
    order = sorted(
        [(op.call, 0, i) for i, op in enumerate(history)] + [(op.end, 1, i) for i, op in enumerate(history)]
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


def _equal(recorded: Any, answer: Any) -> bool:
    return bool(recorded == answer)


class _Stepper:
    """The spec's optional members resolved once: the (state, answer) pairs an operation allows."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.timed = getattr(spec, "outcomes_at", None)
        self.outcomes = getattr(spec, "outcomes", None)
        self.accepts = getattr(spec, "accepts", _equal)

    def results(self, state: Any, op: Operation) -> list[tuple[Any, Any]]:
        try:
            if self.timed is not None:
                return list(self.timed(state, op))
            if self.outcomes is not None:
                return list(self.outcomes(state, op.name, op.args))
            return [self.spec.step(state, op.name, op.args)]
        except Exception as exc:  # the spec refuses the call: that exception is its answer
            return [(state, Raised(type(exc).__name__, str(exc)))]

    def candidates(self, state: Any, op: Operation) -> list[Any]:
        """The states after ``op`` in ``state`` that give its recorded answer (any, if it never returned)."""
        results = self.results(state, op)
        if op.ret is None:
            return [after for after, _ in results]
        return [after for after, answer in results if self._matches(op.result, answer)]

    def _matches(self, recorded: Any, answer: Any) -> bool:
        if isinstance(recorded, Raised) or isinstance(answer, Raised):
            both = isinstance(recorded, Raised) and isinstance(answer, Raised)
            return both and recorded.name == answer.name
        return bool(self.accepts(recorded, answer))


def check_history(
    history: Sequence[Operation], spec: SequentialSpec[S], max_steps: int = MAX_STEPS
) -> Verdict:
    """Whether ``history`` is linearizable against ``spec`` (None: unknown within ``max_steps`` steps).

    The spec's ``prepare``, if it has one, first turns the history into the
    operations it steps.  Calls that never returned may be left out of the
    order.  The budget is a number of search steps, so the verdict is a function
    of the history alone (``seconds`` is only reported).
    """
    start = time.perf_counter()
    prepare = getattr(spec, "prepare", None)
    history = list(prepare(history)) if prepare is not None else list(history)
    verdict = Verdict(None, len(history), len({op.thread for op in history}))
    stepper = _Stepper(spec)
    head = _event_list(history)
    state: S = spec.initial
    linearized = 0
    must = sum(op.ret is not None for op in history)  # returned calls not yet linearized
    memo: set[tuple[int, S]] = set()
    stack: list[tuple[_Event, S, list[S]]] = []  # lifted call, state before it, alternatives left
    longest: list[int] = []
    entry = head.next
    while must:
        if verdict.steps >= max_steps:
            break
        verdict.steps += 1
        assert entry is not None
        lifting = entry.is_call
        if lifting:  # try to linearize this operation here: the states after it that give its answer
            candidates = stepper.candidates(state, history[entry.index])
        elif stack:  # a return: backtrack, to another outcome of the last lifted operation or past it
            entry, state, candidates = stack.pop()
            linearized &= ~(1 << entry.index)
            must += history[entry.index].ret is not None
        else:
            verdict.linearizable = False
            break
        bit = 1 << entry.index
        fresh = [after for after in candidates if (linearized | bit, after) not in memo]
        if fresh:
            memo.add((linearized | bit, fresh[0]))
            stack.append((entry, state, fresh[1:]))
            state, linearized = fresh[0], linearized | bit
            must -= history[entry.index].ret is not None
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
