"""A target without one of a component's optional operations has that group left out and named in the
report, never a bogus FAIL; one without a method the machine cannot do without is a usage error
(exit 2), never a FAIL (issue 5)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import pytest

from spec.models.existence_cache import refuse_bad_capacity
from spec.models.pool_beliefs import refuse_bad_name
from spec.oracle import OracleUsageError, check
from spec.variants.pool_beliefs import InflightAsASet, TextbookPoolBeliefs


class PoolWithout:
    """A per-pool class exposing only some of ``TextbookPoolBeliefs``'s methods (the others are absent)."""

    hidden: frozenset[str] = frozenset()
    inner_class: type[Any] = TextbookPoolBeliefs

    def __init__(self, max_entries: int) -> None:
        self._inner = self.inner_class(max_entries)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in self.hidden:
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __len__(self) -> int:
        return len(self._inner)


class PoolWithoutInvalidateBeyond(PoolWithout):
    hidden = frozenset({"invalidate_beyond"})


class PoolWithOnlyTheCore(PoolWithout):
    hidden = frozenset(
        {
            "contains",
            "covered",
            "untrack_inflight",
            "invalidate_beyond",
            "clear",
            "clear_inflight",
            "snapshot",
        }
    )


class RegistryWithoutClears:
    """A registry whose pools have no ``clear``/``clear_inflight`` (nor does the registry)."""

    def __init__(self, max_entries: int) -> None:
        refuse_bad_capacity(max_entries)  # B1 (P1)
        self.max_entries = max_entries
        self.pools: dict[Hashable, PoolWithout] = {}

    def pool(self, name: Hashable) -> PoolWithout:
        refuse_bad_name(name)  # B1 (P1)
        if name not in self.pools:
            self.pools[name] = PoolWithoutClears(self.max_entries)
        return self.pools[name]


class PoolWithoutClears(PoolWithout):
    hidden = frozenset({"clear", "clear_inflight"})


class RegistryWithoutItsOwnClears(RegistryWithoutClears):
    """A registry without ``clear``/``clear_inflight`` whose pools have them: only the registry's are
    left out, the pools' are still checked."""

    def pool(self, name: Hashable) -> PoolWithout:
        refuse_bad_name(name)  # B1 (P1)
        if name not in self.pools:
            self.pools[name] = PoolWithout(self.max_entries)
        return self.pools[name]


class InflightAsASetWithoutInvalidateBeyond(PoolWithout):
    hidden = frozenset({"invalidate_beyond"})
    inner_class = InflightAsASet


@pytest.mark.clauses("P2", "P3", "P4", "P5")
@pytest.mark.parametrize(
    ("target", "left_out"),
    [
        (PoolWithoutInvalidateBeyond, {"invalidate_beyond"}),
        (PoolWithOnlyTheCore, set(PoolWithOnlyTheCore.hidden)),
        (RegistryWithoutClears, {"clear", "clear_inflight"}),
        (RegistryWithoutItsOwnClears, {"registry clear", "registry clear_inflight"}),
    ],
    ids=["no invalidate_beyond", "only the core", "registry without clears", "pools with clears"],
)
def test_a_pool_beliefs_target_without_an_optional_method_passes_with_the_group_left_out(
    target: type, left_out: set[str]
) -> None:
    result = check("pool-beliefs", target, max_examples=30, steps=15)
    assert result.passed, result.summary()
    assert left_out <= set(result.missing), result.missing
    for method in left_out:
        assert result.missing[method] in result.summary()
    if target is RegistryWithoutItsOwnClears:
        assert "clear" not in result.missing, "the pools' clear() is still checked"


@pytest.mark.slow(
    "an oracle search of about 3 s (200 examples: P3 is found in the first 50, the rest of the budget"
    " checks the other clauses); tests/oracle/test_each_component.py keeps a quick pool-beliefs FAIL in"
    " make test"
)
@pytest.mark.clauses("P3")
def test_a_wrong_pool_beliefs_target_without_an_optional_method_is_still_caught() -> None:
    result = check("pool-beliefs", InflightAsASetWithoutInvalidateBeyond, max_examples=200, steps=15)
    assert result.verdict == "FAIL", result.summary()
    assert "invalidate_beyond" in result.missing
    assert result.clauses[0] == "P3", result.summary()


class ExistenceWithoutContains:
    """A global existence cache with only ``add`` and ``contains_all`` (and no ``contains``)."""

    def __init__(self, max_entries: int) -> None:
        from spec.models.existence_cache import StorageExistenceCacheSpec

        self._inner = StorageExistenceCacheSpec(max_entries)

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        self._inner.add(pool, hashes)

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        return self._inner.contains_all(pool, hashes)


@pytest.mark.clauses("E2", "E4")
def test_an_existence_cache_without_contains_passes_with_the_group_left_out() -> None:
    result = check("existence-cache", ExistenceWithoutContains, max_examples=30, steps=15)
    assert result.passed, result.summary()
    assert {"contains", "covers_all", "invalidate_beyond", "clear", "__len__", "snapshot"} <= set(
        result.missing
    )
    assert set(result.left_out) == {"E3", "E5", "E6", "E7"}, result.left_out


class StoreWithoutBatchQueries:
    """HiCacheFile without ``batch_get`` and ``batch_exists``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from hicache.file_store import HiCacheFile

        self._inner = HiCacheFile(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("batch_get", "batch_exists"):
            raise AttributeError(name)
        return getattr(self._inner, name)


@pytest.mark.clauses("F5")
def test_a_file_store_without_batch_queries_passes_with_them_left_out() -> None:
    result = check("file-store", StoreWithoutBatchQueries, max_examples=10, steps=10)
    assert result.passed, result.summary()
    assert {"batch_get", "batch_exists"} <= set(result.missing)


class StoreMissingBatchSet:
    """HiCacheFile without ``batch_set``: the machine's bursts of writes need it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from hicache.file_store import HiCacheFile

        self._inner = HiCacheFile(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "batch_set":
            raise AttributeError(name)
        return getattr(self._inner, name)


@pytest.mark.clauses("F5")
def test_a_file_store_without_a_method_the_machine_needs_is_a_usage_error_not_a_fail() -> None:
    with pytest.raises(OracleUsageError, match="batch_set"):
        check("file-store", StoreMissingBatchSet, max_examples=10, steps=10)
