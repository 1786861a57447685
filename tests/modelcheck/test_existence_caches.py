"""Exhaustive refinement of the existence caches (E, P): production passes its domain to the fixpoint,
and every deliberately wrong variant of the model (``WRONG_MODEL`` of ``spec/variants``) is caught with a
shortest counterexample."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import pytest

from spec.modelcheck import existence_cache, pool_beliefs
from spec.modelcheck.explorer import Configuration, Counterexample, Result, explore
from spec.variants.existence_cache import WRONG_MODEL as E_VARIANTS
from spec.variants.pool_beliefs import WRONG_MODEL as P_VARIANTS


def _first_counterexample(configs: list[Configuration], depth: int) -> Counterexample | None:
    for config in configs:
        found = explore(config, depth).counterexample
        if found is not None:
            return found
    return None


def _record(results: list[Result], record_property: Callable[[str, object], None]) -> None:
    record_property("distinct_states", sum(r.states for r in results))
    record_property("transitions", sum(r.transitions for r in results))


@pytest.mark.clauses("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8")
def test_production_existence_cache_passes_every_bound_to_its_fixpoint(
    record_property: Callable[[str, object], None],
) -> None:
    """Bounds 0-2 here (``python -m spec.modelcheck``, run by ``make verify``, adds bound 3)."""
    results = [explore(config, 10) for config in existence_cache.configurations(bounds=(0, 1, 2))]
    assert [r.counterexample.render() for r in results if r.counterexample] == []
    assert all(r.complete for r in results)
    _record(results, record_property)


@pytest.mark.clauses("P1", "P2", "P3", "P4", "P5")
def test_production_pool_beliefs_pass_every_bound_to_the_fixpoint(
    record_property: Callable[[str, object], None],
) -> None:
    """Bounds 0-1 here (``python -m spec.modelcheck``, run by ``make verify``, adds bound 2)."""
    results = [explore(config, 12) for config in pool_beliefs.configurations(bounds=(0, 1), max_refs=1)]
    assert [r.counterexample.render() for r in results if r.counterexample] == []
    assert all(r.complete for r in results)
    _record(results, record_property)


@pytest.mark.clauses("E1", "E2", "E3", "E4", "E5", "E6", "E8")
@pytest.mark.parametrize("name", sorted(E_VARIANTS))
def test_every_wrong_existence_cache_variant_is_caught_by_the_model_checker(name: str) -> None:
    factory: Callable[[int], Any] = E_VARIANTS[name][0]
    found = _first_counterexample(existence_cache.configurations(factory), 4)
    assert found is not None, f"{name} passed the model checker"
    assert 1 <= len(found.trace) <= 4


class _SeesRawCounts(pool_beliefs.PoolBeliefsPair):
    """Fingerprints the variants' raw in-flight counts: ``UntrackGoesBelowZero`` hides its negative
    counts from ``snapshot()``, and merged on the snapshot alone the path through them is pruned."""

    def fingerprint(self) -> Hashable:
        raw = tuple(
            sorted((name, tuple(sorted(p.inflight.items()))) for name, p in self.implementation.pools.items())
        )
        return self.abstract_implementation(), raw


def _variant_configurations(factory: Callable[[int], Any]) -> list[Configuration]:
    def config(bound: int) -> Configuration:
        return Configuration(f"cap={bound}", lambda: _SeesRawCounts(factory, bound, max_refs=2))

    return [config(bound) for bound in (1, 2)]


@pytest.mark.clauses("P1", "P2", "P3", "P4", "P5")
@pytest.mark.parametrize("name", sorted(P_VARIANTS))
def test_every_wrong_pool_beliefs_variant_is_caught_by_the_model_checker(name: str) -> None:
    found = _first_counterexample(_variant_configurations(P_VARIANTS[name][0]), 4)
    assert found is not None, f"{name} passed the model checker"
