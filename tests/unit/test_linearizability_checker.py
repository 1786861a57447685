"""The linearizability search on hand-built histories (no threads): it accepts and rejects as it must."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest

from spec.linearizability.checker import Operation, check_history
from spec.linearizability.metadata_cache import MetadataCacheHistorySpec, overlapping


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
