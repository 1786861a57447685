"""M8 without a declaration: a target with ``stats()`` must count (issue 22, decision 5).

The oracle builds a target whose constructor takes ``stats`` with ``stats=True`` and checks its counters
from the first call; a ``stats()`` that never counts FAILs M8 with a counterexample, unless
``--leave-out M8`` sets the counters aside.  A target without ``stats()`` leaves M8 out, as before.
Small budgets: each run takes well under a second.
"""

from __future__ import annotations

from typing import Any

import pytest

from hicache.metadata_cache import MetadataCache, MetadataCacheStats
from spec.models.metadata_cache import MetadataCacheSpec
from spec.oracle import check

BUDGET: dict[str, Any] = {"max_examples": 30, "steps": 10, "seed": 1}


class NeverCounts(MetadataCache):
    """The project's cache with a ``stats()`` that answers zeros whatever happened."""

    def stats(self) -> MetadataCacheStats:
        return MetadataCacheStats(0, 0, 0, 0)


class CountsOnlyWhenAsked(MetadataCacheSpec):
    """The spec (it always counts) with a ``stats()`` whose answer is all zeros unless the constructor
    was given ``stats=True``: the oracle must turn it on."""

    def __init__(self, *args: Any, stats: bool = False, **kwargs: Any) -> None:
        if not isinstance(stats, bool):  # B1 (M1)
            raise TypeError(f"stats must be a bool, got {stats!r}")
        super().__init__(*args, **kwargs)
        self.asked = stats

    def stats(self) -> MetadataCacheStats:
        counted = (self.hits, self.misses, 0, self.evictions) if self.asked else (0, 0, 0, 0)
        return MetadataCacheStats(*counted)


@pytest.mark.clauses("M8")
def test_a_stats_that_never_counts_fails_m8_with_a_counterexample() -> None:
    result = check("metadata-cache", NeverCounts, **BUDGET)
    assert result.verdict == "FAIL", result.summary()
    assert result.clauses[:1] == ["M8"], result.summary()
    assert any("stats()" in line for line in result.counterexample), result.counterexample
    assert "stats=True" in result.repro  # built with its counters on
    assert "M8" not in result.passed_clauses


@pytest.mark.clauses("M8")
def test_the_same_target_with_m8_left_out_passes() -> None:
    result = check("metadata-cache", NeverCounts, leave_out=["M8"], **BUDGET)
    assert result.verdict == "PASS", result.summary()
    assert "M8" in result.left_out and "M8" not in result.passed_clauses


@pytest.mark.clauses("M8")
def test_the_projects_cache_passes_m8_built_with_counters_on() -> None:
    result = check("metadata-cache", MetadataCache, **BUDGET)
    assert result.verdict == "PASS", result.summary()
    assert "M8" in result.passed_clauses


@pytest.mark.clauses("M8")
def test_a_constructor_that_takes_stats_is_built_with_it_true() -> None:
    assert check("metadata-cache", CountsOnlyWhenAsked, **BUDGET).verdict == "PASS"


@pytest.mark.clauses("M8")
def test_a_target_without_stats_leaves_m8_out() -> None:
    result = check("metadata-cache", MetadataCacheSpec, **BUDGET)  # the spec itself has no stats()
    assert result.verdict == "PASS", result.summary()
    assert "stats" in result.missing and "M8" in result.left_out and "M8" not in result.passed_clauses


class ForwardsEverything(MetadataCache):
    """A subclass whose constructor takes ``**kwargs``: counters on through them too."""

    def __init__(self, ttl_seconds: float, **kwargs: Any) -> None:
        super().__init__(ttl_seconds, **kwargs)


@pytest.mark.clauses("M8")
def test_a_constructor_with_kwargs_gets_stats_and_an_adapter_may_omit_it() -> None:
    result = check("metadata-cache", ForwardsEverything, **BUDGET)
    assert result.verdict == "PASS" and "M8" in result.passed_clauses, result.summary()
    # "stats" names both the parameter and the method: omitted, the counters are left out, not checked
    omitted = check("metadata-cache", NeverCounts, adapter={"omit": ["stats"]}, **BUDGET)
    assert omitted.verdict == "PASS" and "M8" not in omitted.passed_clauses, omitted.summary()
