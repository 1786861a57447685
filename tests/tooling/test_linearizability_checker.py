"""The linearizability search on hand-built histories (no threads): it accepts and rejects as it must."""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

import pytest

from spec.linearizability.checker import PENDING, Operation, Raised, check_history, instants
from spec.linearizability.metadata_cache import MetadataCacheHistorySpec, overlapping
from spec.linearizability.recording import HistoryRecorder


def op(thread: int, name: str, args: tuple[Hashable, ...], result: Any, call: int, ret: int) -> Operation:
    return Operation(thread, name, args, result, call, ret)


NEVER = MetadataCacheHistorySpec(-1, None)


@pytest.mark.clauses("M7")
def test_a_sequential_history_that_the_spec_allows_is_linearizable_in_its_own_order() -> None:
    history = [
        op(0, "add", ("a",), None, 0, 1),
        op(0, "contains", ("a",), True, 2, 3),
        op(0, "len", (), 1, 4, 5),
    ]
    verdict = check_history(history, NEVER)
    assert verdict.linearizable is True
    assert verdict.linearization == history


@pytest.mark.clauses("M7")
def test_overlapping_operations_may_take_effect_in_either_order() -> None:
    """contains(a) -> True is called before add(a) but overlaps it: add first is a valid order."""
    history = [op(0, "contains", ("a",), True, 0, 10), op(1, "add", ("a",), None, 2, 5)]
    verdict = check_history(history, NEVER)
    assert verdict.linearizable is True
    assert [o.name for o in verdict.linearization] == ["add", "contains"]
    assert overlapping(history) == 2


@pytest.mark.clauses("M7")
def test_an_answer_that_only_a_later_operation_explains_is_not_linearizable() -> None:
    """contains(a) -> True returned before add(a) was called: real time forbids the only witness."""
    history = [op(0, "contains", ("a",), True, 0, 1), op(1, "add", ("a",), None, 2, 5)]
    verdict = check_history(history, NEVER)
    assert verdict.linearizable is False
    assert "NOT linearizable" in verdict.explain()


@pytest.mark.clauses("M7", "M3", "M6")
def test_the_restarted_lifetime_interleaving_is_not_linearizable() -> None:
    """The racy add's history (see forced_racy_history), with hand-made times: no order explains it."""
    history = [
        op(0, "add", ("a",), None, 0, 70),
        op(1, "add", ("a",), None, 10, 20),
        op(1, "add", ("b",), None, 30, 40),
        op(1, "add", ("c",), None, 80, 90),
        op(1, "contains", ("a",), True, 100, 110),
        op(1, "contains", ("b",), False, 120, 130),
    ]
    assert check_history(history, MetadataCacheHistorySpec(-1, 2)).linearizable is False
    evicting_a = [
        *history[:4],
        op(1, "contains", ("a",), False, 100, 110),
        op(1, "contains", ("b",), True, 120, 130),
    ]
    assert check_history(evicting_a, MetadataCacheHistorySpec(-1, 2)).linearizable is True


@pytest.mark.clauses("M7", "M2")
@pytest.mark.parametrize(("delta", "alive"), [(1.0, True), (1.25, False)])
def test_clock_moves_are_operations_of_the_history_and_the_boundary_is_inclusive(
    delta: float, alive: bool
) -> None:
    spec = MetadataCacheHistorySpec(1.0, None)
    history = [
        op(0, "add", ("a",), None, 0, 1),
        op(1, "advance", (delta,), None, 2, 3),
        op(0, "contains", ("a",), True, 4, 5),
    ]
    assert check_history(history, spec).linearizable is alive


@pytest.mark.clauses("M7")
def test_a_search_that_runs_out_of_budget_says_unknown_never_pass() -> None:
    """12 concurrent misses and an impossible hit: every subset of the misses is a configuration to refute."""
    history = [op(i, "contains", (f"k{i}",), False, 0, 100) for i in range(12)]
    history.append(op(12, "contains", ("x",), True, 0, 100))
    refuted = check_history(history, NEVER)
    assert refuted.linearizable is False
    assert refuted.configurations == 2**12 - 1  # every non-empty subset (the empty one is the start)
    # The budget is a count of search steps: one step short of the refutation is unknown, on any machine.
    short = check_history(history, NEVER, max_steps=refuted.steps - 1)
    assert short.linearizable is None and short.steps == refuted.steps - 1
    assert check_history(history, NEVER, max_steps=0).linearizable is None
    assert check_history(history, NEVER, max_steps=refuted.steps).linearizable is False


def test_an_unknown_operation_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown operation"):
        NEVER.step(NEVER.initial, "pop", ())


class _Coin:
    """A nondeterministic spec: ``flip()`` lands heads or tails (state), ``look()`` answers the state."""

    initial = "none"

    def step(self, state: str, name: str, args: tuple[Hashable, ...]) -> tuple[str, Any]:
        return self.outcomes(state, name, args)[0]

    def outcomes(self, state: str, name: str, args: tuple[Hashable, ...]) -> list[tuple[str, Any]]:
        if name == "flip":
            return [("heads", None), ("tails", None)]
        return [(state, state)]


@pytest.mark.clauses("C5")
def test_a_nondeterministic_spec_is_searched_over_each_allowed_outcome() -> None:
    """Only the second outcome of flip() explains look() -> 'tails': the search must backtrack into it."""
    history = [op(0, "flip", (), None, 0, 1), op(0, "look", (), "tails", 2, 3)]
    assert check_history(history, _Coin()).linearizable is True
    impossible = [op(0, "flip", (), None, 0, 1), op(0, "look", (), "edge", 2, 3)]
    assert check_history(impossible, _Coin()).linearizable is False


# The protocol's optional members (issue 21): timed specs (O7), calls that never returned, exceptions as
# answers, an answer-acceptance hook, and ``prepare``.


class _Lease:
    """A timed spec: ``grab()`` at instant x holds the lease until x + 1 (inclusive); ``held()`` says so.

    The state is (the last instant, the lease's end); the instants tried are :func:`instants`'s.
    """

    initial = (-math.inf, -math.inf)

    def step(self, state: tuple[float, float], name: str, args: tuple[Hashable, ...]) -> tuple[Any, Any]:
        raise AssertionError("a timed spec is stepped through outcomes_at")

    def outcomes_at(self, state: tuple[float, float], operation: Operation) -> list[tuple[Any, Any]]:
        clock, end = state
        results: list[tuple[Any, Any]] = []
        for x in instants(clock, operation, (end, math.nextafter(end, math.inf))):
            if operation.name == "grab":
                results.append(((x, x + 1.0), None))
            else:
                results.append(((x, end), x <= end))
        return results


def timed(
    thread: int, name: str, result: Any, call: float, ret: float | None, now: float | None = None
) -> Operation:
    return Operation(thread, name, (), result, call, ret, now)


@pytest.mark.clauses("O7")
def test_a_timed_spec_picks_each_call_an_instant_inside_its_interval() -> None:
    """grab() returned by 1, so the lease ends by 2: held() -> True needs an instant <= 2 in its interval."""
    grab = timed(0, "grab", None, 0.0, 1.0)
    assert check_history([grab, timed(1, "held", True, 1.5, 3.0)], _Lease()).linearizable is True
    assert check_history([grab, timed(1, "held", True, 2.5, 3.0)], _Lease()).linearizable is False
    # held() -> False needs an instant past the lease's end, which a grab at 0.5 or later puts past 1.5.
    late = timed(0, "grab", None, 0.5, 1.0)
    assert check_history([late, timed(1, "held", False, 1.2, 1.9)], _Lease()).linearizable is True
    assert check_history([late, timed(1, "held", False, 1.2, 1.4)], _Lease()).linearizable is False
    # Just past the end: the instant after the breakpoint is tried, so a pinned call right after it fits.
    just_past = timed(1, "held", False, 1.2, 1.9)
    pinned = timed(2, "held", False, 1.5, 2.0, now=math.nextafter(1.5, 2))
    assert check_history([late, just_past, pinned], _Lease()).linearizable is True


@pytest.mark.clauses("O7")
def test_a_recorded_now_pins_the_instant_and_instants_never_decrease_along_the_order() -> None:
    grab = timed(0, "grab", None, 0.0, 1.0)
    assert check_history([grab, timed(1, "held", True, 1.5, 3.0, now=2.5)], _Lease()).linearizable is False
    assert check_history([grab, timed(1, "held", True, 1.5, 3.0, now=1.75)], _Lease()).linearizable is True
    # Overlapping calls pinned at 5 (grab) and 4 (held): held must come first, so it cannot see the lease.
    both = [timed(0, "grab", None, 0.0, 10.0, now=5.0), timed(1, "held", True, 0.0, 10.0, now=4.0)]
    assert check_history(both, _Lease()).linearizable is False
    both[1] = timed(1, "held", False, 0.0, 10.0, now=4.0)
    assert check_history(both, _Lease()).linearizable is True
    # A recorded now outside the call's own interval explains nothing.
    assert check_history([timed(0, "grab", None, 0.0, 1.0, now=1.5)], _Lease()).linearizable is False
    assert instants(3.0, timed(0, "held", None, 1.0, 2.0)) == []


@pytest.mark.clauses("M7")
def test_a_call_that_never_returned_may_take_effect_or_not_but_not_both() -> None:
    hung = Operation(0, "add", ("a",), PENDING, 0, None)
    assert check_history([hung, op(1, "contains", ("a",), True, 5, 6)], NEVER).linearizable is True
    assert check_history([hung, op(1, "contains", ("a",), False, 5, 6)], NEVER).linearizable is True
    # Once it took effect (a is live), TTL -1 keeps it live: True then False has no order.
    seen_then_gone = [hung, op(1, "contains", ("a",), True, 5, 6), op(1, "contains", ("a",), False, 7, 8)]
    assert check_history(seen_then_gone, NEVER).linearizable is False
    # It cannot take effect before it was called.
    too_early = [op(1, "contains", ("a",), True, 0, 1), replace(hung, call=2)]
    assert check_history(too_early, NEVER).linearizable is False


class _Checked:
    """``put(n)`` refuses a negative ``n`` with ValueError (state unchanged); ``get()`` answers a tuple."""

    initial: tuple[int, ...] = ()

    def step(self, state: tuple[int, ...], name: str, args: tuple[Hashable, ...]) -> tuple[Any, Any]:
        if name == "put":
            assert isinstance(args[0], int)
            if args[0] < 0:
                raise ValueError(f"n must be >= 0, got {args[0]}")
            return (*state, args[0]), None
        return state, state


@pytest.mark.clauses("M7")
def test_an_exception_is_an_answer_compared_by_its_type_name() -> None:
    put = op(0, "put", (-1,), Raised("ValueError"), 0, 1)
    assert check_history([put, op(0, "get", (), (), 2, 3)], _Checked()).linearizable is True
    assert check_history([replace(put, result=Raised("TypeError"))], _Checked()).linearizable is False
    assert check_history([replace(put, result=None)], _Checked()).linearizable is False  # took bad input
    assert check_history([op(0, "put", (1,), Raised("ValueError"), 0, 1)], _Checked()).linearizable is False


class _Lenient(_Checked):
    """The same spec, accepting a list where it answers a tuple (a JSON trace's answers)."""

    def accepts(self, recorded: Any, answer: Any) -> bool:
        return bool(recorded == answer or (isinstance(recorded, list) and tuple(recorded) == answer))


class _Prepared(_Checked):
    """The same spec, stepping each ``put2(n)`` as two ``put(n)``."""

    def prepare(self, history: list[Operation]) -> list[Operation]:
        return [p for o in history for p in ([replace(o, name="put")] * 2 if o.name == "put2" else [o])]


def test_the_spec_decides_which_recorded_answers_are_its_own_and_what_it_steps() -> None:
    history = [op(0, "put", (1,), None, 0, 1), op(0, "get", (), [1], 2, 3)]
    assert check_history(history, _Checked()).linearizable is False
    assert check_history(history, _Lenient()).linearizable is True
    doubled = [op(0, "put2", (1,), None, 0, 1), op(0, "get", (), (1, 1), 2, 3)]
    verdict = check_history(doubled, _Prepared())
    assert verdict.linearizable is True and verdict.operations == 3


def test_the_recorder_keeps_an_exception_as_the_answer_when_asked() -> None:
    class Refuses:
        def put(self, n: int) -> None:
            raise ValueError(f"n must be >= 0, got {n}")

    kept = HistoryRecorder(keep_exceptions=True)
    answer = kept.perform(0, Refuses(), "put", -1)
    assert answer == Raised("ValueError") and "n must be >= 0" in answer.detail
    assert [o.result for o in kept.operations] == [Raised("ValueError")]
    with pytest.raises(ValueError, match="n must be"):
        HistoryRecorder().perform(0, Refuses(), "put", -1)
