"""PoolExistenceBeliefs / PooledExistenceCache edges pinned for mutation testing (docs/MUTATION.md):
exact messages of bad input (B1) and invariant checks that fire on a corrupted structure."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from hicache.pool_beliefs import PooledExistenceCache, PoolExistenceBeliefs


@pytest.mark.clauses("B1", "P1", "P2")
@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: PoolExistenceBeliefs(-1), ValueError, "max_entries must be >= 0, got -1"),
        (lambda: PooledExistenceCache(-1), ValueError, "max_entries must be >= 0, got -1"),
        (
            lambda: PoolExistenceBeliefs(2).invalidate_beyond([1], -1),
            ValueError,
            "keep_pages must be >= 0, got -1",
        ),
    ],
)
def test_bad_input_is_rejected_with_an_exact_message(
    call: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def _registry() -> PooledExistenceCache:
    registry = PooledExistenceCache(2)
    registry.pool("p").add([1])
    registry.pool("p").track_inflight([2])
    return registry


@pytest.mark.clauses("P1", "P3")
@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda r: r.pool("p")._beliefs.update({5: None, 6: None}), "bound exceeded"),
        (lambda r: r.pool("p")._beliefs.update({1: "x"}), "values are not None"),
        (lambda r: r.pool("p")._inflight.__setitem__(2, 0), "non-positive count"),
        (lambda r: r._pools.update({"q": PoolExistenceBeliefs(7)}), "pool with another bound"),
    ],
    ids=["bound", "values", "count", "registry-bound"],
)
def test_check_invariants_fires_on_each_corruption(
    corrupt: Callable[[PooledExistenceCache], object], message: str
) -> None:
    registry = _registry()
    registry.check_invariants()
    corrupt(registry)
    with pytest.raises(AssertionError, match=f"^{re.escape(message)}$"):
        registry.check_invariants()
