"""StorageExistenceCache edges pinned for mutation testing (docs/MUTATION.md): the exact messages of bad
input (B1), any collection as ``extra_cover``, and invariant checks that fire on a corrupted structure."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from hicache.existence_cache import _TAG, _UNSET, StorageExistenceCache


def _cache() -> StorageExistenceCache:
    cache = StorageExistenceCache(max_entries=4)
    cache.add("p", [1])
    return cache


@pytest.mark.clauses("B1", "E1", "E2", "E4", "E5", "E6")
@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda c: StorageExistenceCache(-1), ValueError, "max_entries must be >= 0, got -1"),
        (lambda c: c.add("p", 5), TypeError, "hashes must be an iterable of page hashes, got int 5"),
        (lambda c: c.contains_all("p", 5), TypeError, "hashes must be an iterable of page hashes, got int 5"),
        (lambda c: c.covers_all("p", 5), TypeError, "hashes must be an iterable of page hashes, got int 5"),
        (
            lambda c: c.covers_all("p", [1], extra_cover=5),
            TypeError,
            "extra_cover must be a set of page hashes, got int 5",
        ),
        (lambda c: c.invalidate_beyond("p", [1], -1), ValueError, "keep_pages must be >= 0, got -1"),
        (
            lambda c: c.invalidate_beyond("p", {1}, 0),
            TypeError,
            "hashes must be a sequence of page hashes, got set {1}",
        ),
        (lambda c: c.contains([], 1), TypeError, "pool must be hashable, got list []"),
        (
            lambda c: StorageExistenceCache(4).add([], [1]),  # type: ignore[arg-type]
            TypeError,
            "pool must be hashable, got list []",
        ),
    ],
)
def test_bad_input_is_rejected_with_an_exact_message(
    call: Callable[[StorageExistenceCache], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call(_cache())


@pytest.mark.clauses("E5")
def test_any_collection_is_accepted_as_extra_cover() -> None:
    cache = _cache()
    assert cache.covers_all("p", [1, 2], extra_cover=[2])
    assert cache.covers_all("p", (1, 3), extra_cover={3: "acknowledged"})
    assert not cache.covers_all("p", [1, 4], extra_cover=(2, 3))


@pytest.mark.clauses("E1")
@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda c: c._beliefs.update({10: None, 11: None, 12: None, 13: None}), "bound exceeded"),
        (lambda c: c._beliefs.update({1: "x"}), "values are not None"),
        (lambda c: setattr(c, "_primary", _UNSET), "beliefs without a primary pool"),
        (
            lambda c: c._beliefs.update({(_TAG, "p", 2): None}),
            "a primary-pool belief stored under a tagged key",
        ),
    ],
    ids=["bound", "values", "no-primary", "tagged-primary"],
)
def test_check_invariants_fires_on_each_corruption(
    corrupt: Callable[[StorageExistenceCache], object], message: str
) -> None:
    cache = _cache()
    cache.check_invariants()
    corrupt(cache)
    with pytest.raises(AssertionError, match=f"^{re.escape(message)}$"):
        cache.check_invariants()


@pytest.mark.clauses("E1", "E2")
def test_check_invariants_accepts_hashes_that_look_like_pool_names_or_tagged_keys() -> None:
    """A page hash equal to the primary pool's name, in another pool, and a bare 3-tuple page hash whose
    middle is the primary pool's name, are legitimate beliefs."""
    cache = _cache()
    cache.add("q", ["p"])
    cache.add("p", [("x", "p", "y")])
    cache.check_invariants()
    assert cache.snapshot() == [("p", 1), ("q", "p"), ("p", ("x", "p", "y"))]
