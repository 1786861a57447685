"""Exhaustive refinement of the file store (F, V, C): production passes every sequence up to a depth in
every configuration; each wrong variant of ``spec/variants/file_store.py`` is caught, except the C1 race,
which no sequential exploration can show (``test_c1_schedules.py`` explores its interleavings)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from spec.modelcheck import file_store
from spec.modelcheck.explorer import explore
from spec.variants.file_store import CAUGHT_BY_MACHINE, RACES, WRONG


@pytest.mark.clauses("F3", "F4", "F5", "F6", "F7", "F8", "V3", "V4", "V5", "V6", "C3", "B2")
def test_production_file_store_refines_the_model_over_every_sequence_of_two_operations(
    record_property: Callable[[str, object], None],
) -> None:
    """Depth 2 here; ``python -m spec.modelcheck`` (run by ``make verify``) goes to depth 4."""
    results = [explore(config, 2) for config in file_store.configurations()]
    assert [r.counterexample.render() for r in results if r.counterexample] == []
    assert all(r.levels == 2 for r in results)
    record_property("distinct_states", sum(r.states for r in results))
    record_property("transitions", sum(r.transitions for r in results))


# The variants whose shortest counterexample is deep enough that exploring to it takes seconds: their
# case runs in make verify.
DEEP = {"eviction ratio ignored"}
DEEP_MARK = pytest.mark.slow("a variant whose shortest counterexample takes seconds of exhaustive search")


@pytest.mark.clauses("F1", "F3", "F4", "F6", "F7", "V3", "V4", "V5", "V6", "C3")
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[DEEP_MARK] if n in DEEP else []) for n in CAUGHT_BY_MACHINE]
)
def test_every_sequential_file_store_bug_is_caught_with_a_shortest_counterexample(name: str) -> None:
    factory, _clause = WRONG[name]
    found = None
    for config in file_store.configurations(factory):
        found = explore(config, 4).counterexample
        if found is not None:
            break
    assert found is not None, f"{name} passed the model checker"


@pytest.mark.clauses("C1")
def test_the_missing_c1_guard_is_invisible_to_any_sequential_exploration() -> None:
    """Without concurrency a probe never overlaps a removal, so the variant refines the model."""
    factory, _clause = RACES["no C1 guard"]
    assert all(explore(config, 2).ok for config in file_store.configurations(factory))
