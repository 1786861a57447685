"""The checker is exhaustive: planted bugs show at exactly their depth; state counts match hand counts."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import pytest

from hicache import MetadataCache
from spec.modelcheck.explorer import Configuration, Result, explore
from spec.modelcheck.metadata_cache import MetadataCachePair, configurations
from spec.variants.metadata_cache import (
    EvictsTheNewest,
    ExclusiveBoundary,
    KeepsStaleBirth,
    forgets_the_nth_live_key,
)

KEYS = ("a", "b", "c", "d", "e")


def _one(factory: Callable[..., Any], ttl: float, bound: int | None, **kwargs: Any) -> Configuration:
    def build() -> MetadataCachePair:
        return MetadataCachePair(factory, ttl, bound, **kwargs)

    return Configuration(f"ttl={ttl} cap={bound}", build)


@pytest.mark.clauses("M3", "M5")
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_a_bug_that_needs_n_operations_is_found_at_depth_n_and_not_at_n_minus_1(n: int) -> None:
    """The planted bug drops a new key while exactly n - 1 keys are live: n distinct adds show it.

    Every operation family is enabled (adds, queries, removes, clears, the clock), so the
    search at depth n - 1 really covers every shorter sequence and finds nothing.
    """
    config = _one(forgets_the_nth_live_key(n), -1, None, keys=KEYS[:n])
    shallow = explore(config, n - 1)
    assert shallow.ok, shallow.counterexample
    assert not shallow.complete, "the bound, not a fixpoint, stopped the shallow search"
    deep = explore(config, n)
    assert deep.counterexample is not None
    trace = deep.counterexample.trace
    assert len(trace) == n
    assert [op[0] for op in trace] == ["add"] * n
    assert len({op[1] for op in trace}) == n, "n distinct keys"


@pytest.mark.parametrize(
    ("factory", "ttl", "bound", "depth", "clause"),
    [
        (EvictsTheNewest, -1, 2, 3, "M6"),
        (ExclusiveBoundary, 0, None, 2, "M2"),
        (ExclusiveBoundary, 1.0, None, 3, "M2"),
        (KeepsStaleBirth, 1.0, None, 3, "M3"),
    ],
    ids=["evicts-newest", "exclusive-boundary-ttl0", "exclusive-boundary-ttl1", "keeps-stale-birth"],
)
@pytest.mark.clauses("M2", "M3", "M6")
def test_each_planted_semantic_bug_is_found_at_its_shortest_depth(
    factory: Callable[..., Any], ttl: float, bound: int | None, depth: int, clause: str
) -> None:
    """Breadth-first order makes the counterexample a shortest one: none exists one level earlier."""
    config = _one(factory, ttl, bound, keys=("a", "b", "c"), tick=0.25)
    assert explore(config, depth - 1).ok
    found = explore(config, depth + 2).counterexample
    assert found is not None
    assert len(found.trace) == depth, found.render()


@pytest.mark.clauses("M2", "M3", "M6")
def test_state_count_of_a_two_key_ttl_one_cache_equals_the_hand_count() -> None:
    """Keys {a, b}, TTL 1, tick 1, no bound, operations add(a), add(b), advance.

    Abstract states (what the spec holds): the live keys in birth order with their
    ages, 0 or 1 (age 1 = the TTL: still alive, M2 inclusive; age 2 is dead).
    Older keys come first, so along the order ages do not increase:
      * empty: 1;
      * one key, a or b, age 0 or 1: 2 * 2 = 4;
      * two keys, order (a, b) or (b, a), ages (0, 0), (1, 0) or (1, 1): 2 * 3 = 6.
    Total 11.

    Explored states (fingerprints): production purges lazily (``add`` pops the
    expired prefix first; ``advance`` purges nothing), so an expired entry X may
    still be stored.  Ages per position are 0, 1 or X, non-increasing:
      * empty: 1;
      * one key, age 0, 1 or X: 2 * 3 = 6;
      * two keys x, y: (0, 0), (1, 0), (1, 1), (X, 1), (X, X): 2 * 5 = 10
        ((X, 0) is unreachable: the add of y first purges an expired x).
    Total 17.  Each state enables the same 3 operations: 17 * 3 = 51 transitions.
    New states per level: {()}; a0, b0; a1, b1, ab00, ba00; aX, bX, a1b0, b1a0,
    ab11, ba11; aXb1, bXa1, aXbX, bXaX; then nothing (the fixpoint): diameter 4.
    """
    config = _one(MetadataCache, 1.0, None, keys=("a", "b"), tick=1.0, families=frozenset({"add", "advance"}))
    result = explore(config, 10)
    assert result.ok
    assert (result.abstract_states, result.states, result.transitions) == (11, 17, 51)
    assert (result.diameter, result.complete) == (4, True)
    assert result.states_per_level == [1, 2, 4, 6, 4, 0]


@pytest.mark.clauses("M6")
def test_state_count_of_a_bounded_never_expiring_cache_equals_the_hand_count() -> None:
    """Keys {a, b, c}, TTL -1, bound 2, operation add only: 10 states, 30 transitions, diameter 2.

    Hand count.  Nothing expires, so a state is the stored keys in birth order,
    at most 2 of them: 1 empty + 3 singletons + 3 * 2 ordered pairs = 10, each
    reachable by adding its keys in order (a full cache evicts its oldest:
    (a, b) + c -> (b, c), already a pair).  3 adds per state: 30 transitions.
    """
    config = _one(MetadataCache, -1, 2, keys=("a", "b", "c"), families=frozenset({"add"}))
    result = explore(config, 10)
    assert (result.states, result.abstract_states, result.transitions) == (10, 10, 30)
    assert (result.diameter, result.complete) == (2, True)
    assert result.states_per_level == [1, 3, 6, 0]


@pytest.mark.clauses("M2", "M3", "M4", "M5", "M6", "M8")
def test_production_metadata_cache_passes_the_ci_domain_to_its_fixpoint(
    record_property: Callable[[str, object], None],
) -> None:
    """TTL -1/0/1 on a 1/2 s tick, bound None/1/2, counters on and off: every configuration reaches its
    fixpoint (``python -m spec.modelcheck``, run by ``make verify``, adds TTL 0.5 and a 1/4 s tick)."""
    results: list[Result] = [explore(config, 12) for config in configurations(ttls=(-1, 0, 1.0), tick=0.5)]
    failures = [r.counterexample.render() for r in results if r.counterexample is not None]
    assert failures == []
    assert all(r.complete for r in results)
    record_property("distinct_states", sum(r.states for r in results))
    record_property("transitions", sum(r.transitions for r in results))


def test_a_negative_depth_bound_is_rejected() -> None:
    config = _one(MetadataCache, -1, None)
    with pytest.raises(ValueError, match="max_depth"):
        explore(config, -1)


class _AbstractionOnly(MetadataCachePair):
    def fingerprint(self) -> Hashable:
        return self.abstract_implementation()


@pytest.mark.clauses("M3")
def test_merging_on_the_abstraction_alone_would_miss_the_stale_birth_bug() -> None:
    """Why pairs fingerprint hidden state: add(a), expire past a, add(a) passes through the
    abstract state of the empty cache, which the root already holds; merged on the
    abstraction, the path is pruned before the re-add that shows the bug."""

    def build() -> MetadataCachePair:
        return _AbstractionOnly(KeepsStaleBirth, 1.0, None, keys=("a", "b", "c"), tick=0.25)

    assert explore(Configuration("abstraction only", build), 6).ok
