"""Adapters, left-out clause groups, time control and determinism of the oracle (issue 5)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import pytest

import spec.variants.metadata_cache as variants
from spec.oracle import Adapter, check
from spec.variants.existence_cache import TextbookExistenceLRU, TrimBeforeInsert


class RenamedTTLCache:
    """A correct hard-TTL cache with its own names: put / has / discard, capacity=, timer=."""

    def __init__(self, ttl: float, timer: Callable[[], float], capacity: int | None = None) -> None:
        self._inner = variants.TextbookHardTTL(ttl, max_entries=capacity, clock=timer)

    def put(self, key: Hashable) -> None:
        self._inner.add(key)

    def has(self, key: Hashable) -> bool:
        return self._inner.contains(key)

    def discard(self, key: Hashable) -> None:
        self._inner.remove(key)

    def size(self) -> int:
        return len(self._inner)


class RenamedOffByOne(RenamedTTLCache):
    """The same names, and the M2 boundary mistake."""

    def __init__(self, ttl: float, timer: Callable[[], float], capacity: int | None = None) -> None:
        self._inner = variants.BoundaryExclusive(ttl, max_entries=capacity, clock=timer)


RENAMES = Adapter(
    methods={"add": "put", "contains": "has", "remove": "discard", "__len__": "size"},
    arguments={"__init__": {"max_entries": "capacity", "clock": "timer"}},
    positional={"__init__": ("ttl_seconds", "clock")},
)


@pytest.mark.clauses("M2", "M3", "M4", "M5", "M6")
def test_a_declarative_adapter_maps_renamed_methods_and_arguments() -> None:
    result = check("metadata-cache", RenamedTTLCache, adapter=RENAMES, max_examples=60, steps=15)
    assert result.passed, result.summary()
    assert result.time_control == "injected: the fake clock is passed as timer="
    batches = {"add_many", "contains_many", "contains_prefix", "remove_many"}  # M9: none of them
    assert set(result.missing) == {"clear", "stats", "snapshot", *batches}
    assert set(result.left_out) == {"M5", "M8", "M9"}  # clause groups only: what the missing ones carry


@pytest.mark.clauses("M2")
def test_a_divergence_behind_an_adapter_is_reported_in_the_targets_own_names() -> None:
    result = check(
        "metadata-cache",
        RenamedOffByOne,
        adapter=RENAMES.as_dict(),
        max_examples=300,
        steps=15,
        every_clause=False,
    )
    assert result.verdict == "FAIL"
    calls = [line for line in result.counterexample if not line.startswith(("clock.now = ", "clock = "))]
    assert calls[0].startswith("cache = RenamedOffByOne(") and ", clock, capacity=" in calls[0], calls
    calls = calls[1:]
    assert calls[0].startswith("cache.put(")
    assert calls[-1].startswith(("cache.has(", "cache.size(")), calls  # a query, in its own names
    built = r"cache = target\([0-9.]+, clock(, capacity=([0-9]+|None))?\)"
    assert re.search(built, result.repro), result.repro


@pytest.mark.clauses("M2", "M3", "M4")
def test_missing_groups_are_left_out_and_named_instead_of_failing() -> None:
    result = check("metadata-cache", variants.PlainHardTTLSet, max_examples=40, steps=15)
    assert result.passed, result.summary()
    batches = {"add_many", "contains_many", "contains_prefix", "remove_many"}  # M9
    assert set(result.left_out) == {"M5", "M6", "M8", "M9"}
    assert set(result.missing) == {
        "max_entries",
        "remove",
        "clear",
        "__len__",
        "stats",
        "snapshot",
        *batches,
    }
    assert "M6 bounded size" in result.summary()


@pytest.mark.clauses("M2")
def test_omit_leaves_out_a_group_the_target_has() -> None:
    result = check(
        "metadata-cache",
        variants.TextbookHardTTL,
        adapter={"omit": ["max_entries", "__len__"]},
        max_examples=20,
    )
    assert result.passed
    assert {"max_entries", "__len__"} <= set(result.missing)


@pytest.mark.clauses("M2", "M4")
def test_a_target_reading_time_monotonic_itself_runs_on_the_fake_clock_and_is_restored() -> None:
    result = check("metadata-cache", variants.MonotonicHardTTL, max_examples=40, steps=15)
    assert result.passed, result.summary()
    assert result.time_control.startswith("patched") and "time" in result.time_control
    assert vars(variants)["time"] is time  # the module's own view of time is back
    caught = check(
        "metadata-cache", variants.MonotonicBoundaryExclusive, max_examples=300, steps=15, every_clause=False
    )
    assert caught.verdict == "FAIL" and caught.clauses[0] == "M2"
    assert vars(variants)["time"] is time


class PerPoolViews:
    """An existence cache in the per-pool form: ``cache.pool(name)`` views over one global LRU."""

    def __init__(self, max_entries: int) -> None:
        self.lru = TextbookExistenceLRU(max_entries)

    def pool(self, name: Hashable) -> Any:
        lru = self.lru

        class View:
            def add(self, hashes: Iterable[Hashable]) -> None:
                lru.add(name, hashes)

            def contains(self, page_hash: Hashable) -> bool:
                return lru.contains(name, page_hash)

            def contains_all(self, hashes: Iterable[Hashable]) -> bool:
                return lru.contains_all(name, hashes)

            def covers_all(self, hashes: Iterable[Hashable], extra_cover: Any = frozenset()) -> bool:
                return lru.covers_all(name, hashes, extra_cover)

            def invalidate_beyond(self, hashes: Any, keep_pages: int) -> None:
                lru.invalidate_beyond(name, hashes, keep_pages)

        return View()

    def clear(self) -> None:
        self.lru.clear()

    def __len__(self) -> int:
        return len(self.lru)


class PerPoolViewsTrimmingFirst(PerPoolViews):
    def __init__(self, max_entries: int) -> None:
        self.lru = TrimBeforeInsert(max_entries)


@pytest.mark.clauses("E2", "E3", "E4", "E5", "E6", "E7")
def test_the_existence_cache_is_accepted_in_the_per_pool_form_too() -> None:
    result = check("existence-cache", PerPoolViews, adapter={"form": "per-pool"}, max_examples=40, steps=15)
    assert result.passed, result.summary()
    assert set(result.missing) == {"snapshot"}  # so only the answers are compared
    wrong = check(
        "existence-cache",
        PerPoolViewsTrimmingFirst,
        adapter={"form": "per-pool"},
        max_examples=300,
        steps=15,
        every_clause=False,  # the first failure is the point: no search for others
    )
    assert wrong.verdict == "FAIL", wrong.summary()
    assert any(line.startswith("cache.pool(") for line in wrong.counterexample)


@pytest.mark.clauses("M2", "E2")
def test_runs_are_deterministic_for_a_seed() -> None:
    def run(seed: int) -> dict[str, Any]:
        report = check(
            "metadata-cache", variants.RefreshOnReAdd, seed=seed, max_examples=60, steps=15
        ).as_dict()
        report["figures"].pop("seconds")
        return report

    assert run(2) == run(2)
    first = check("existence-cache", TextbookExistenceLRU, seed=5, max_examples=30, steps=10).figures
    again = check("existence-cache", TextbookExistenceLRU, seed=5, max_examples=30, steps=10).figures
    assert {k: v for k, v in first.items() if k != "seconds"} == {
        k: v for k, v in again.items() if k != "seconds"
    }


@pytest.mark.clauses("M4")
@pytest.mark.parametrize("module", ["spec.oracle._adapter", "spec.oracle._run", "spec.oracle._time"])
def test_the_oracles_docstring_examples_hold(module: str) -> None:
    import doctest
    import importlib

    assert doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS).failed == 0
