"""Deterministic unit tests of StorageExistenceCache (E1-E8, B1)."""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterator
from typing import Any

import pytest

from hicache import StorageExistenceCache
from spec.models.existence_cache import StorageExistenceCacheSpec


def order(cache: StorageExistenceCache) -> list[Hashable]:
    """The page hashes, least recently used first (one-pool tests)."""
    return [h for _, h in cache.snapshot()]


@pytest.mark.clauses("E1")
def test_default_bound_is_512_ki_beliefs() -> None:
    assert StorageExistenceCache().max_entries == 512 * 1024


@pytest.mark.clauses("E1", "E2")
def test_zero_capacity_remembers_nothing() -> None:
    cache = StorageExistenceCache(0)
    cache.add("p", ["a", "b"])
    assert len(cache) == 0
    assert not cache.contains("p", "a")
    cache.check_invariants()


@pytest.mark.clauses("E2")
def test_add_makes_each_page_most_recently_used_in_order() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b", "c"])
    cache.add("p", ["b", "d", "a"])
    assert order(cache) == ["c", "b", "d", "a"]


@pytest.mark.clauses("E2")
def test_a_batch_longer_than_the_bound_keeps_only_its_own_tail() -> None:
    cache = StorageExistenceCache(3)
    cache.add("p", ["x"])
    cache.add("p", ["a", "b", "c", "d", "e"])
    assert order(cache) == ["c", "d", "e"]


@pytest.mark.clauses("E2")
def test_a_repeated_page_in_one_batch_ends_at_its_last_position() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b", "a"])
    assert order(cache) == ["b", "a"]


@pytest.mark.clauses("E2")
def test_the_bound_is_one_global_lru_over_every_pool() -> None:
    cache = StorageExistenceCache(3)
    cache.add("p", ["a", "b"])
    cache.add("q", ["a", "c"])
    assert cache.snapshot() == [("p", "b"), ("q", "a"), ("q", "c")]
    cache.check_invariants()


@pytest.mark.clauses("E1", "E2")
def test_pools_are_separate_key_spaces_even_for_tuple_hashes() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", [("q", "a")])  # a hash that looks like another pool's key
    assert not cache.contains("q", "a")
    cache.add("q", ["a"])
    assert cache.snapshot() == [("p", ("q", "a")), ("q", "a")]
    assert cache.contains("p", ("q", "a")) and cache.contains("q", "a")
    cache.check_invariants()


@pytest.mark.clauses("E7")
def test_clear_forgets_every_pool_and_the_next_pool_starts_afresh() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a"])
    cache.add("q", ["b"])
    cache.clear()
    assert len(cache) == 0 and cache.snapshot() == []
    cache.add("q", ["b"])
    cache.add("p", ["a"])
    assert cache.snapshot() == [("q", "b"), ("p", "a")]
    cache.check_invariants()


@pytest.mark.clauses("E3")
def test_contains_touches_a_believed_page_only() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b"])
    assert cache.contains("p", "a")
    assert not cache.contains("p", "z")
    assert not cache.contains("q", "a")
    assert order(cache) == ["b", "a"]


@pytest.mark.clauses("E4")
def test_contains_all_touches_up_to_the_first_miss_and_not_after() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b", "c", "d"])
    assert not cache.contains_all("p", ["b", "x", "a"])
    assert order(cache) == ["a", "c", "d", "b"]
    assert cache.contains_all("p", ["c", "a"])
    assert order(cache) == ["d", "b", "c", "a"]


@pytest.mark.clauses("E4")
def test_contains_all_of_an_empty_chain_is_true_even_for_an_unknown_pool() -> None:
    cache = StorageExistenceCache(10)
    assert cache.contains_all("p", [])
    assert cache.contains_all("p", iter(()))
    cache.add("p", ["a"])
    assert cache.contains_all("q", [])
    assert not cache.contains_all("q", ["a"])


@pytest.mark.clauses("E5")
def test_extra_cover_counts_without_being_added_or_touched() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b"])
    assert cache.covers_all("p", ["a", "x", "y"], extra_cover={"x", "y"})
    assert order(cache) == ["b", "a"]
    assert not cache.contains("p", "x")


@pytest.mark.clauses("E5")
def test_covers_all_stops_at_the_first_page_neither_believed_nor_covered() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b", "c"])
    assert not cache.covers_all("p", ["b", "x", "z", "a"], extra_cover=frozenset({"x"}))
    assert order(cache) == ["a", "c", "b"]
    assert cache.covers_all("p", ["a", "b"])  # default: no extra cover
    assert not cache.covers_all("p", ("q",), extra_cover={"r"})


@pytest.mark.clauses("E5")
def test_covers_all_with_a_believed_page_also_in_extra_cover_touches_it() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b"])
    assert cache.covers_all("p", ["a"], extra_cover={"a"})
    assert order(cache) == ["b", "a"]


@pytest.mark.clauses("E6")
def test_invalidate_beyond_drops_the_tail_and_leaves_the_head_untouched() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b", "c", "d"])
    cache.add("q", ["c"])
    cache.invalidate_beyond("p", ["b", "a", "c", "x"], 2)
    assert cache.snapshot() == [("p", "a"), ("p", "b"), ("p", "d"), ("q", "c")]


@pytest.mark.clauses("E6")
@pytest.mark.parametrize("keep_pages", [3, 4, 100])
def test_invalidate_beyond_with_keep_pages_at_or_past_the_end_is_a_no_op(keep_pages: int) -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b", "c"])
    cache.invalidate_beyond("p", ("a", "b", "c"), keep_pages)
    assert order(cache) == ["a", "b", "c"]


@pytest.mark.clauses("E8")
def test_one_shot_generators_are_read_once_by_every_operation() -> None:
    cache = StorageExistenceCache(10)
    cache.add("p", (h for h in "abc"))
    assert cache.contains_all("p", (h for h in "ab"))
    assert cache.covers_all("p", (h for h in "cxa"), extra_cover={"x"})
    assert order(cache) == ["b", "c", "a"]
    cache.add("q", (h for h in "ab"))
    assert cache.contains_all("q", (h for h in "ba"))
    assert cache.covers_all("q", (h for h in "xa"), extra_cover={"x"})


@pytest.mark.clauses("E8")
def test_a_key_error_raised_by_the_callers_generator_is_not_taken_for_a_miss() -> None:
    def broken() -> Iterator[str]:
        yield "a"
        raise KeyError("the caller's own bug")

    cache = StorageExistenceCache(10)
    cache.add("p", ["a"])
    with pytest.raises(KeyError, match="own bug"):
        cache.contains_all("p", broken())


@pytest.mark.clauses("E1", "E2", "E3", "E4", "E5", "E6", "E7")
def test_production_matches_the_spec_on_a_long_seeded_run_with_two_pools() -> None:
    rng = random.Random(20261129)
    cache, model = StorageExistenceCache(40), StorageExistenceCacheSpec(40)
    universe = [f"{i:064x}" for i in range(60)]
    for _ in range(3000):
        pool = rng.choice("pq")
        chain = rng.sample(universe, rng.randrange(9))
        op = rng.randrange(5)
        if op == 0:
            cache.add(pool, chain)
            model.add(pool, chain)
        elif op == 1:
            assert cache.contains_all(pool, chain) == model.contains_all(pool, chain)
        elif op == 2:
            cover = set(rng.sample(universe, 10))
            assert cache.covers_all(pool, chain, cover) == model.covers_all(pool, chain, cover)
        elif op == 3:
            keep = rng.randrange(10)
            cache.invalidate_beyond(pool, chain, keep)
            model.invalidate_beyond(pool, chain, keep)
        else:
            assert cache.contains(pool, universe[0]) == model.contains(pool, universe[0])
    assert cache.snapshot() == model.snapshot()
    cache.check_invariants()


@pytest.mark.clauses("E1", "E2", "E3", "E4", "E5", "E6", "E7")
def test_two_instances_fed_the_same_calls_hold_the_same_state() -> None:
    def replay(cache: StorageExistenceCache) -> list[Any]:
        rng = random.Random(7)
        answers: list[Any] = []
        for _ in range(2000):
            pool = rng.choice(("p", "q", "r"))
            chain = [f"h{rng.randrange(30)}" for _ in range(rng.randrange(8))]
            op = rng.randrange(4)
            if op == 0:
                cache.add(pool, chain)
            elif op == 1:
                answers.append(cache.contains_all(pool, iter(chain)))
            elif op == 2:
                answers.append(cache.covers_all(pool, chain, {"h1", "h2"}))
            else:
                cache.invalidate_beyond(pool, chain, rng.randrange(4))
        return answers

    first, second = StorageExistenceCache(25), StorageExistenceCache(25)
    assert replay(first) == replay(second)
    assert first.snapshot() == second.snapshot()
    assert len(first) == len(second) > 0


# -- bad input (B1): clear errors naming the parameter, state unchanged -----------------------------


@pytest.mark.clauses("E1", "B1")
@pytest.mark.parametrize(
    ("bound", "error"),
    [(-1, ValueError), (1.5, TypeError), ("3", TypeError), (True, TypeError), (None, TypeError)],
)
def test_invalid_max_entries_is_rejected_naming_the_parameter(bound: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_entries") as info:
        StorageExistenceCache(bound)
    assert repr(bound) in str(info.value)


def _populated() -> StorageExistenceCache:
    cache = StorageExistenceCache(10)
    cache.add("p", ["a", "b"])
    cache.add("q", ["c"])
    return cache


@pytest.mark.clauses("E6", "B1")
@pytest.mark.parametrize(("keep_pages", "error"), [(-1, ValueError), (1.0, TypeError), (True, TypeError)])
def test_invalid_keep_pages_is_rejected_and_changes_nothing(keep_pages: Any, error: type[Exception]) -> None:
    cache = _populated()
    before = cache.snapshot()
    with pytest.raises(error, match="keep_pages"):
        cache.invalidate_beyond("p", ["a", "b"], keep_pages)
    assert cache.snapshot() == before


@pytest.mark.clauses("E6", "E8", "B1")
def test_invalidate_beyond_rejects_a_non_sequence_and_changes_nothing() -> None:
    cache = _populated()
    before = cache.snapshot()
    with pytest.raises(TypeError, match="hashes"):
        cache.invalidate_beyond("p", (h for h in "ab"), 0)  # type: ignore[arg-type]
    assert cache.snapshot() == before


@pytest.mark.clauses("E8", "B1")
@pytest.mark.parametrize("method", ["add", "contains_all", "covers_all"])
@pytest.mark.parametrize("hashes", [5, None, 1.5])
def test_non_iterable_hashes_are_a_type_error_naming_the_parameter(method: str, hashes: Any) -> None:
    cache = _populated()
    before = cache.snapshot()
    with pytest.raises(TypeError, match="hashes") as info:
        getattr(cache, method)("p", hashes)
    assert repr(hashes) in str(info.value)
    assert cache.snapshot() == before


@pytest.mark.clauses("E5", "B1")
def test_an_extra_cover_that_is_not_a_collection_is_a_type_error() -> None:
    cache = _populated()
    before = cache.snapshot()
    with pytest.raises(TypeError, match="extra_cover"):
        cache.covers_all("p", ["a"], extra_cover=5)  # type: ignore[arg-type]
    assert cache.snapshot() == before


@pytest.mark.clauses("B1")
@pytest.mark.parametrize("method", ["add", "contains_all", "covers_all", "contains"])
def test_an_unhashable_pool_is_a_type_error_naming_the_parameter(method: str) -> None:
    cache = _populated()
    before = cache.snapshot()
    with pytest.raises(TypeError, match="pool"):
        getattr(cache, method)(["not", "hashable"], "a" if method == "contains" else ["a"])
    assert cache.snapshot() == before


@pytest.mark.clauses("B1")
def test_an_unhashable_first_pool_is_rejected_before_it_becomes_primary() -> None:
    cache = StorageExistenceCache(10)
    with pytest.raises(TypeError, match="pool"):
        cache.add({}, ["a"])  # type: ignore[arg-type]
    cache.add("p", ["a"])
    assert cache.snapshot() == [("p", "a")]
    cache.check_invariants()


# -- exact messages (B1) and the invariant checks themselves ------------------------------------------


@pytest.mark.clauses("E8", "B1")
def test_bad_argument_messages_name_the_parameter_its_type_and_value() -> None:
    cache = StorageExistenceCache(4)
    with pytest.raises(TypeError) as info:
        cache.add("p", 5)  # type: ignore[arg-type]
    assert str(info.value) == "hashes must be an iterable of page hashes, got int 5"
    with pytest.raises(TypeError) as info:
        cache.invalidate_beyond("p", {"a"}, 0)  # type: ignore[arg-type]
    assert str(info.value) == "hashes must be a sequence of page hashes, got set {'a'}"
    with pytest.raises(TypeError) as info:
        cache.covers_all("p", ["a"], extra_cover=2.5)  # type: ignore[arg-type]
    assert str(info.value) == "extra_cover must be a set of page hashes, got float 2.5"
    with pytest.raises(TypeError) as info:
        cache.contains(["p"], "a")  # type: ignore[arg-type]
    assert str(info.value) == "pool must be hashable, got list ['p']"
    with pytest.raises(ValueError) as value_info:
        cache.invalidate_beyond("p", ["a"], -1)
    assert str(value_info.value) == "keep_pages must be >= 0, got -1"


@pytest.mark.clauses("E8")
def test_a_type_error_raised_inside_the_callers_iterable_propagates_unchanged() -> None:
    def broken() -> Iterator[str]:
        yield "a"
        raise TypeError("the caller's own bug")

    cache = StorageExistenceCache(4)
    with pytest.raises(TypeError, match=r"^the caller's own bug$"):
        cache.add("p", broken())
    assert len(cache) == 0


@pytest.mark.clauses("E1")
@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda c: c._beliefs.update({"x": None, "y": None, "z": None}), "^bound exceeded$"),
        (lambda c: c._beliefs.update({"a": 1}), "^values are not None$"),
        (lambda c: c._beliefs.update({("tag", "p", "b"): None}), None),  # a plain tuple hash is fine
    ],
)
def test_check_invariants_names_what_is_broken(corrupt: Any, message: str | None) -> None:
    cache = StorageExistenceCache(3)
    cache.add("p", ["a"])
    corrupt(cache)
    if message is None:
        cache.check_invariants()
    else:
        with pytest.raises(AssertionError, match=message):
            cache.check_invariants()


@pytest.mark.clauses("E1")
def test_check_invariants_catches_a_primary_pool_belief_under_a_tagged_key() -> None:
    cache = StorageExistenceCache(4)
    cache.add("q", ["x"])  # q is the primary pool
    cache.add("p", ["a"])
    (tagged,) = [key for key in cache._beliefs if isinstance(key, tuple)]
    cache._beliefs[(tagged[0], "q", "b")] = None
    with pytest.raises(AssertionError, match=r"^a primary-pool belief stored under a tagged key$"):
        cache.check_invariants()


@pytest.mark.clauses("E1")
def test_check_invariants_catches_beliefs_without_a_primary_pool() -> None:
    cache = StorageExistenceCache(4)
    cache._beliefs["a"] = None
    with pytest.raises(AssertionError, match=r"^beliefs without a primary pool$"):
        cache.check_invariants()


@pytest.mark.clauses("E8", "B1")
@pytest.mark.parametrize("method", ["add", "contains_all", "covers_all"])
def test_the_non_iterable_message_is_exact_for_every_chain_method(method: str) -> None:
    cache = StorageExistenceCache(4)
    with pytest.raises(TypeError) as info:
        getattr(cache, method)("p", 7)
    assert str(info.value) == "hashes must be an iterable of page hashes, got int 7"


@pytest.mark.clauses("E7")
def test_after_clear_the_next_pool_becomes_primary_and_keys_by_the_bare_hash() -> None:
    cache = StorageExistenceCache(4)
    cache.add("p", ["a"])
    cache.clear()
    cache.add("q", ["b"])
    assert list(cache._beliefs) == ["b"], "the first pool after clear() should take the tuple-free fast path"
    assert cache.snapshot() == [("q", "b")]


@pytest.mark.clauses("E1")
def test_the_first_pool_keys_its_beliefs_by_the_bare_hash_and_others_by_tagged_tuples() -> None:
    cache = StorageExistenceCache(4)
    cache.add("p", ["a"])
    cache.add("q", ["a"])
    bare, tagged = list(cache._beliefs)
    assert bare == "a", "the first pool should take the tuple-free fast path"
    assert isinstance(tagged, tuple) and tagged[1:] == ("q", "a")


@pytest.mark.clauses("E1", "B1")
def test_the_max_entries_message_is_exact() -> None:
    with pytest.raises(ValueError) as info:
        StorageExistenceCache(-3)
    assert str(info.value) == "max_entries must be >= 0, got -3"
