"""Real threads, recorded and checked for linearizability (M7); the racy variant must be caught.

The threads meet (``Rendezvous``) at every ``MEET_EVERY``-th call: the leader's call
spans the others' calls at that index, so every history overlaps by construction,
and the racy ``add`` is held open at its scheduling point while the others act.
Nothing here depends on how fast or loaded the machine is.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hicache import MetadataCache
from spec.linearizability.checker import check_history
from spec.linearizability.metadata_cache import (
    MEET_EVERY,
    MetadataCacheHistorySpec,
    check_real_thread_histories,
    forced_racy_history,
)
from spec.variants.metadata_cache import RacyMetadataCache, ScheduledMetadataCache

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
    for key in ("histories", "operations", "overlapping", "linearizable", "meetings"):
        record_property(key, getattr(summary, key))
    assert summary.violations == 0, summary.first_violation and summary.first_violation.explain()
    assert summary.unknown == 0
    assert summary.meetings == 60 * len(range(0, 25, MEET_EVERY))
    assert summary.overlapping >= 3 * summary.meetings, "each meeting overlaps its 3 threads' calls"
    assert summary.overlapping > 0, "the threads never overlapped: the run checked nothing concurrent"


@pytest.mark.clauses("M7")
def test_threads_that_never_interleave_on_their_own_still_overlap_at_every_meeting(
    record_property: Callable[[str, object], None],
) -> None:
    """The fast idle machine, made certain: with a thread switch interval of 10 s no thread is preempted,
    so threads running free run one after another and no call overlaps another (recorded, not asserted:
    it is CPython's scheduling, not ours).  The meetings hand over by blocking, so they need no preemption:
    each one overlaps a call of every thread."""
    free = check_real_thread_histories(
        MetadataCache, histories=10, seed=7, meet_every=None, switch_interval=10.0
    )
    met = check_real_thread_histories(MetadataCache, histories=10, seed=7, switch_interval=10.0)
    record_property("overlapping_without_meetings", free.overlapping)
    record_property("overlapping", met.overlapping)
    assert free.violations == met.violations == met.unknown == 0
    assert met.meetings == 10 * len(range(0, 25, MEET_EVERY))
    assert met.overlapping >= 3 * met.meetings > 0


@pytest.mark.clauses("M7", "M3", "M6")
def test_real_thread_histories_with_the_add_held_at_the_racy_point_before_productions_add_stay_linearizable(
    record_property: Callable[[str, object], None],
) -> None:
    """The control of the next test: the same hold, before production's atomic ``add``, rejects nothing."""
    summary = check_real_thread_histories(ScheduledMetadataCache, histories=60, seed=3, ttl=-1.0)
    record_property("histories", summary.histories)
    assert summary.violations == 0, summary.first_violation and summary.first_violation.explain()
    assert summary.unknown == 0
    assert summary.overlapping > 0


@pytest.mark.clauses("M7")
def test_real_threads_catch_the_racy_cache_within_a_bounded_number_of_histories(
    record_property: Callable[[str, object], None],
) -> None:
    """The race window is open by construction: at each of a history's 7 meetings the leader's racy
    ``add`` (when its call there is one) is held between its check and its act while the others make their
    calls.  Whether a window shows in the answers depends on the seeded scripts and the free-running calls
    between meetings: 4-8% of histories here, idle or with every core busy.  Stopping at the first
    violation costs a few dozen histories; at even 2%, 1000 would all miss with probability below 1e-8.
    A correct cache never gets past the bound (the control above)."""
    summary = check_real_thread_histories(
        RacyMetadataCache, histories=1000, seed=3, ttl=-1.0, stop_at_first_violation=True
    )
    record_property("histories_to_catch_racy_variant", summary.histories)
    assert summary.violations == 1, summary.line()


@pytest.mark.clauses("M7")
def test_with_every_call_a_meeting_the_racy_interleaving_is_forced_at_the_same_history_every_run() -> None:
    """With a meeting at every call the schedule is fixed by the rendezvous alone: the racy cache is caught
    in the same history of the seeded batch in every run, on any machine under any load."""
    runs = [
        check_real_thread_histories(
            RacyMetadataCache, histories=300, seed=3, ttl=-1.0, meet_every=1, stop_at_first_violation=True
        )
        for _ in range(2)
    ]
    assert [r.violations for r in runs] == [1, 1], [r.line() for r in runs]
    assert runs[0].histories == runs[1].histories
