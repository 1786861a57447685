"""Real threads, recorded and checked for linearizability (M7); the racy variant must be caught."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hicache import MetadataCache
from spec.linearizability.checker import check_history
from spec.linearizability.metadata_cache import (
    MetadataCacheHistorySpec,
    RacyMetadataCache,
    ScheduledMetadataCache,
    check_real_thread_histories,
    forced_racy_history,
)

pytestmark = pytest.mark.threads


@pytest.mark.clauses("M7", "M3", "M6")
def test_the_racy_add_held_at_its_scheduling_point_is_reported_not_linearizable() -> None:
    history = forced_racy_history(RacyMetadataCache)
    verdict = check_history(history, MetadataCacheHistorySpec(-1, 2))
    assert verdict.linearizable is False, verdict.explain()
    assert [(o.name, o.args, o.result) for o in history[-2:]] == [
        ("contains", ("a",), True),
        ("contains", ("b",), False),
    ]


@pytest.mark.clauses("M7", "M3")
def test_production_add_held_at_the_same_point_stays_linearizable() -> None:
    verdict = check_history(forced_racy_history(ScheduledMetadataCache), MetadataCacheHistorySpec(-1, 2))
    assert verdict.linearizable is True, verdict.explain()


@pytest.mark.clauses("M7", "M2", "M3", "M4", "M5", "M6")
@pytest.mark.parametrize("ttl", [1.0, -1.0])
def test_real_thread_histories_of_the_production_cache_are_all_linearizable(
    ttl: float, record_property: Callable[[str, object], None]
) -> None:
    summary = check_real_thread_histories(MetadataCache, histories=60, seed=7, ttl=ttl)
    for key in ("histories", "operations", "overlapping", "linearizable"):
        record_property(key, getattr(summary, key))
    assert summary.violations == 0, summary.first_violation and summary.first_violation.explain()
    assert summary.unknown == 0
    assert summary.overlapping > 0, "the threads never overlapped: the run checked nothing concurrent"


@pytest.mark.clauses("M7")
def test_real_threads_catch_the_racy_cache_within_a_bounded_number_of_histories(
    record_property: Callable[[str, object], None],
) -> None:
    """Seen in about one history in ten here; 300 attempts leave no realistic chance of a miss."""
    summary = check_real_thread_histories(
        RacyMetadataCache, histories=300, seed=3, ttl=-1.0, stop_at_first_violation=True
    )
    record_property("histories_to_catch_racy_variant", summary.histories)
    assert summary.violations == 1, summary.line()
