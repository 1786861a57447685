"""Deterministic unit tests of PooledExistenceCache / PoolExistenceBeliefs (P1-P5, B1)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hicache import PooledExistenceCache, PoolExistenceBeliefs
from spec.models.pool_beliefs import PooledExistenceCacheSpec


@pytest.mark.clauses("P1")
def test_the_registry_hands_out_one_pool_per_name_with_its_bound() -> None:
    registry = PooledExistenceCache(4)
    kv = registry.pool("kv")
    assert registry.pool("kv") is kv
    assert registry.pool("mamba") is not kv
    assert kv.max_entries == registry.max_entries == 4


@pytest.mark.clauses("P1", "P2")
def test_one_pool_can_no_longer_evict_another_pools_beliefs() -> None:
    registry = PooledExistenceCache(2)
    registry.pool("kv").add(["a", "b"])
    registry.pool("mamba").add(["a", "c", "d"])
    assert registry.pool("kv").snapshot() == (["a", "b"], {})
    assert registry.pool("mamba").snapshot() == (["c", "d"], {})
    registry.check_invariants()


@pytest.mark.clauses("P1", "P5")
def test_registry_clear_and_clear_inflight_apply_to_every_pool() -> None:
    registry = PooledExistenceCache(4)
    for name in ("kv", "mamba"):
        registry.pool(name).add(["a"])
        registry.pool(name).track_inflight(["b"])
    registry.clear_inflight()
    assert registry.snapshot() == {"kv": (["a"], {}), "mamba": (["a"], {})}
    for name in ("kv", "mamba"):
        registry.pool(name).track_inflight(["b"])
    registry.clear()
    assert registry.snapshot() == {"kv": ([], {}), "mamba": ([], {})}


@pytest.mark.clauses("P2")
def test_pool_add_contains_and_contains_all_follow_the_lru_rules_of_e() -> None:
    pool = PoolExistenceBeliefs(3)
    pool.add(["a", "b", "c", "d"])
    assert pool.snapshot()[0] == ["b", "c", "d"]
    assert pool.contains("b")
    assert not pool.contains_all(["c", "x", "d"])
    assert pool.snapshot()[0] == ["d", "b", "c"]
    assert pool.contains_all([])
    pool.invalidate_beyond(["d", "b"], 1)
    assert pool.snapshot()[0] == ["d", "c"]
    pool.invalidate_beyond(["d", "c"], 5)
    assert len(pool) == 2


@pytest.mark.clauses("P2")
def test_zero_capacity_pool_remembers_nothing() -> None:
    pool = PoolExistenceBeliefs(0)
    pool.add(["a"])
    assert len(pool) == 0 and not pool.contains("a")


@pytest.mark.clauses("P3")
def test_in_flight_references_count_occurrences() -> None:
    pool = PoolExistenceBeliefs(4)
    pool.track_inflight(["a", "a", "b"])
    pool.track_inflight(iter(["a"]))
    assert pool.snapshot()[1] == {"a": 3, "b": 1}
    pool.untrack_inflight(["a", "b", "b", "c"])
    assert pool.snapshot()[1] == {"a": 2}
    pool.untrack_inflight(["a", "a", "a"])
    assert pool.snapshot()[1] == {}
    pool.track_inflight(["a"])
    assert pool.snapshot()[1] == {"a": 1}, "untracking past zero must not leave a debt"
    pool.check_invariants()


@pytest.mark.clauses("P4")
def test_covered_touches_believed_pages_and_not_in_flight_ones() -> None:
    pool = PoolExistenceBeliefs(4)
    pool.add(["a", "b"])
    pool.track_inflight(["x"])
    assert pool.covered(["a", "x"])
    assert pool.snapshot() == (["b", "a"], {"x": 1})
    assert not pool.contains_all(["a", "x"]), "in flight is not believed"
    assert not pool.covered(["b", "y", "a"])
    assert pool.snapshot()[0] == ["a", "b"]


@pytest.mark.clauses("P4")
def test_with_nothing_in_flight_covered_is_contains_all() -> None:
    pool = PoolExistenceBeliefs(4)
    pool.add(["a", "b", "c"])
    assert not pool.covered(iter(["b", "z", "a"]))
    assert pool.snapshot()[0] == ["a", "c", "b"]
    assert pool.covered(["a"])


@pytest.mark.clauses("P5")
def test_clear_drops_beliefs_and_references_and_clear_inflight_only_references() -> None:
    pool = PoolExistenceBeliefs(4)
    pool.add(["a"])
    pool.track_inflight(["b"])
    pool.clear_inflight()
    assert pool.snapshot() == (["a"], {})
    pool.track_inflight(["b"])
    pool.clear()
    assert pool.snapshot() == ([], {})


@pytest.mark.clauses("P1", "P2", "P3", "P4", "P5")
def test_production_matches_the_spec_on_a_long_seeded_run() -> None:
    rng = random.Random(11)
    registry, model = PooledExistenceCache(12), PooledExistenceCacheSpec(12)
    for _ in range(3000):
        name = rng.choice(("kv", "mamba"))
        pool, want = registry.pool(name), model.pool(name)
        chain = [f"h{rng.randrange(20)}" for _ in range(rng.randrange(7))]
        op = rng.randrange(7)
        if op == 0:
            pool.add(chain)
            want.add(chain)
        elif op == 1:
            assert pool.contains_all(chain) == want.contains_all(chain)
        elif op == 2:
            assert pool.covered(chain) == want.covered(chain)
        elif op == 3:
            pool.track_inflight(chain)
            want.track_inflight(chain)
        elif op == 4:
            pool.untrack_inflight(chain)
            want.untrack_inflight(chain)
        elif op == 5:
            keep = rng.randrange(8)
            pool.invalidate_beyond(chain, keep)
            want.invalidate_beyond(chain, keep)
        elif rng.random() < 0.05:
            registry.clear_inflight()
            model.clear_inflight()
    assert registry.snapshot() == model.snapshot()
    registry.check_invariants()


@pytest.mark.clauses("P1", "P2", "P3", "P4", "P5")
def test_two_registries_fed_the_same_calls_hold_the_same_state() -> None:
    def replay(registry: PooledExistenceCache) -> list[bool]:
        rng = random.Random(3)
        answers = []
        for _ in range(2000):
            pool = registry.pool(rng.choice(("kv", "mamba", "indexer")))
            chain = [f"h{rng.randrange(25)}" for _ in range(rng.randrange(8))]
            op = rng.randrange(5)
            if op == 0:
                pool.add(chain)
            elif op == 1:
                answers.append(pool.covered(iter(chain)))
            elif op == 2:
                pool.track_inflight(chain)
            elif op == 3:
                pool.untrack_inflight(chain)
            else:
                answers.append(pool.contains_all(chain))
        return answers

    first, second = PooledExistenceCache(10), PooledExistenceCache(10)
    assert replay(first) == replay(second)
    assert first.snapshot() == second.snapshot()


# -- bad input (B1): clear errors naming the parameter, state unchanged -----------------------------


@pytest.mark.clauses("P1", "B1")
@pytest.mark.parametrize("cls", [PooledExistenceCache, PoolExistenceBeliefs])
@pytest.mark.parametrize(("bound", "error"), [(-1, ValueError), (2.0, TypeError), (False, TypeError)])
def test_invalid_max_entries_is_rejected_naming_the_parameter(
    cls: type[Any], bound: Any, error: type[Exception]
) -> None:
    with pytest.raises(error, match="max_entries") as info:
        cls(bound)
    assert repr(bound) in str(info.value)


def _populated() -> PoolExistenceBeliefs:
    pool = PoolExistenceBeliefs(4)
    pool.add(["a", "b"])
    pool.track_inflight(["c"])
    return pool


@pytest.mark.clauses("P2", "B1")
@pytest.mark.parametrize(("keep_pages", "error"), [(-2, ValueError), ("1", TypeError), (None, TypeError)])
def test_invalid_keep_pages_is_rejected_and_changes_nothing(keep_pages: Any, error: type[Exception]) -> None:
    pool = _populated()
    before = pool.snapshot()
    with pytest.raises(error, match="keep_pages"):
        pool.invalidate_beyond(["a", "b"], keep_pages)
    assert pool.snapshot() == before


@pytest.mark.clauses("P2", "P3", "P4", "B1")
@pytest.mark.parametrize(
    "method", ["add", "contains_all", "covered", "track_inflight", "untrack_inflight", "invalidate_beyond"]
)
def test_non_iterable_hashes_are_a_type_error_naming_the_parameter(method: str) -> None:
    pool = _populated()
    before = pool.snapshot()
    args: tuple[Any, ...] = (7, 0) if method == "invalidate_beyond" else (7,)
    with pytest.raises(TypeError, match="hashes"):
        getattr(pool, method)(*args)
    assert pool.snapshot() == before


@pytest.mark.clauses("P1", "B1")
def test_an_unhashable_pool_name_is_a_type_error_naming_the_parameter() -> None:
    registry = PooledExistenceCache(4)
    # the parameter is ``name``: the message names it (B1; the oracle requires it, issue 23)
    with pytest.raises(TypeError, match=r"^pool name must be hashable, got list \['kv'\]$"):
        registry.pool(["kv"])  # type: ignore[arg-type]
    assert registry.snapshot() == {}


# -- exact messages (B1) and the invariant checks themselves ------------------------------------------


@pytest.mark.clauses("P3", "B1")
def test_bad_hashes_messages_name_the_parameter_its_type_and_value() -> None:
    pool = PoolExistenceBeliefs(4)
    with pytest.raises(TypeError) as info:
        pool.track_inflight(None)  # type: ignore[arg-type]
    assert str(info.value) == "hashes must be an iterable of page hashes, got NoneType None"
    with pytest.raises(TypeError) as info:
        pool.invalidate_beyond(iter(["a"]), 0)  # type: ignore[arg-type]
    assert str(info.value).startswith("hashes must be a sequence of page hashes, got list_iterator ")


@pytest.mark.clauses("P2", "P3", "P1")
def test_check_invariants_names_what_is_broken() -> None:
    pool = PoolExistenceBeliefs(1)
    pool.add(["a"])
    pool._beliefs["b"] = None
    with pytest.raises(AssertionError, match=r"^bound exceeded$"):
        pool.check_invariants()
    pool = PoolExistenceBeliefs(2)
    pool._beliefs["a"] = 0  # type: ignore[assignment]
    with pytest.raises(AssertionError, match=r"^values are not None$"):
        pool.check_invariants()
    pool = PoolExistenceBeliefs(2)
    pool._inflight["a"] = 0
    with pytest.raises(AssertionError, match=r"^non-positive count$"):
        pool.check_invariants()
    registry = PooledExistenceCache(2)
    registry._pools["kv"] = PoolExistenceBeliefs(3)
    with pytest.raises(AssertionError, match=r"^pool with another bound$"):
        registry.check_invariants()


@pytest.mark.clauses("P2")
def test_a_chain_with_a_known_or_repeated_page_ends_each_page_at_its_last_occurrence() -> None:
    pool = PoolExistenceBeliefs(5)
    pool.add(["a", "b", "c"])
    pool.add(["d", "a", "d"])
    assert pool.snapshot()[0] == ["b", "c", "a", "d"]
    pool.add(["b", "e", "f"])  # one new page too many: the least recent, c, goes
    assert pool.snapshot()[0] == ["a", "d", "b", "e", "f"]


@pytest.mark.clauses("P2", "P3", "P4", "B1")
@pytest.mark.parametrize("method", ["add", "contains_all", "covered", "track_inflight", "untrack_inflight"])
def test_the_non_iterable_message_is_exact_for_every_chain_method(method: str) -> None:
    pool = PoolExistenceBeliefs(4)
    with pytest.raises(TypeError) as info:
        getattr(pool, method)(7)
    assert str(info.value) == "hashes must be an iterable of page hashes, got int 7"


@pytest.mark.clauses("P1", "P2", "B1")
def test_the_max_entries_and_keep_pages_messages_are_exact() -> None:
    for cls in (PooledExistenceCache, PoolExistenceBeliefs):
        with pytest.raises(ValueError) as info:
            cls(-2)
        assert str(info.value) == "max_entries must be >= 0, got -2"
    with pytest.raises(ValueError) as info:
        PoolExistenceBeliefs(2).invalidate_beyond(["a"], -1)
    assert str(info.value) == "keep_pages must be >= 0, got -1"
