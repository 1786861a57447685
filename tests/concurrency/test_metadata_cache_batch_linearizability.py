"""Real-thread histories with the M9 batches, under both eviction orders, checked for linearizability.

The threads meet (``Rendezvous``) at every ``MEET_EVERY``-th call, so every history overlaps by
construction; the deliberately torn batch (``TornBatchMetadataCache``: a lock per key, a scheduling
point between keys) must be caught, held open between its keys, and the control must not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from hicache import MetadataCache
from spec.linearizability.checker import check_history
from spec.linearizability.metadata_cache import (
    MetadataCacheHistorySpec,
    check_real_thread_histories,
    forced_torn_batch_history,
)
from spec.variants.metadata_cache import ScheduledBatchMetadataCache, TornBatchMetadataCache

pytestmark = pytest.mark.threads


@pytest.mark.clauses("M9", "M7")
def test_a_batch_torn_between_its_keys_is_reported_not_linearizable() -> None:
    history = forced_torn_batch_history(TornBatchMetadataCache)
    verdict = check_history(history, MetadataCacheHistorySpec(-1, None))
    assert verdict.linearizable is False, verdict.explain()
    assert [(o.name, o.result) for o in history if o.name == "contains_many"] == [
        ("contains_many", [True, False])
    ]


@pytest.mark.clauses("M9", "M7")
def test_production_batch_held_at_the_same_point_stays_linearizable() -> None:
    verdict = check_history(
        forced_torn_batch_history(ScheduledBatchMetadataCache), MetadataCacheHistorySpec(-1, None)
    )
    assert verdict.linearizable is True, verdict.explain()


@pytest.mark.clauses("M9", "M7", "M6", "M6-lru")
@pytest.mark.parametrize("eviction", ["birth", "lru"])
@pytest.mark.parametrize("ttl", [1.0, -1.0])
def test_real_thread_histories_with_batches_are_linearizable_in_both_orders(
    eviction: str, ttl: float, record_property: Callable[[str, object], None]
) -> None:
    factory: Callable[..., Any] = functools.partial(MetadataCache, eviction=eviction)
    summary = check_real_thread_histories(
        factory, histories=40, seed=13, ttl=ttl, eviction=eviction, batches=True
    )
    for key in ("histories", "operations", "overlapping", "linearizable", "meetings"):
        record_property(key, getattr(summary, key))
    assert summary.violations == 0, summary.first_violation and summary.first_violation.explain()
    assert summary.unknown == 0
    assert summary.overlapping > 0


@pytest.mark.clauses("M6-lru", "M7")
def test_a_birth_ordered_cache_checked_against_the_lru_spec_is_caught() -> None:
    """The order is observable in histories: production's default order fails the lru spec."""
    summary = check_real_thread_histories(
        MetadataCache, histories=40, seed=13, ttl=-1.0, eviction="lru", stop_at_first_violation=True
    )
    assert summary.violations >= 1


@pytest.mark.clauses("M9", "M7")
def test_real_thread_histories_catch_the_torn_batch() -> None:
    summary = check_real_thread_histories(
        TornBatchMetadataCache, histories=40, seed=13, ttl=-1.0, batches=True, stop_at_first_violation=True
    )
    assert summary.violations >= 1
