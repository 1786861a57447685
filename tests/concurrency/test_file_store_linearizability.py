"""Real threads on one file store, recorded and checked against the model run sequentially (C5).

Without a cap every history is linearizable with every call atomic.  With a
cap, a ``set`` and a ``get`` take effect in the atomic steps the evictor's
contract describes (a write is reserved, published, then committed; a read
refreshes recency after it read): the strict spec, every call atomic, rejects
some capped histories that no store with writes in flight can avoid, and the
spec in steps accepts every history of the store and rejects the histories of
the deliberately wrong variants below.  docs/LINEARIZABILITY.md has the detail.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hicache.file_store import HiCacheFile
from spec.linearizability.file_store import (
    FOUND,
    FileStoreHistorySpec,
    RecencyAtReservationStore,
    check_background_scan_histories,
    check_file_store_histories,
    forced_found_mid_eviction,
    forced_history,
    forced_run,
    forced_scan_history,
)
from spec.linearizability.file_store import check_file_store_history as check
from spec.variants.file_store import EvictsWritesInFlight, ScanReadoptsRemovedPages

pytestmark = pytest.mark.threads

STRICT, IN_STEPS = FileStoreHistorySpec(phases=False), FileStoreHistorySpec()


@pytest.mark.clauses("C5", "F3", "F4", "F6", "F7")
def test_real_thread_histories_of_an_uncapped_store_are_all_linearizable(
    record_property: Callable[[str, object], None],
) -> None:
    summary = check_file_store_histories(HiCacheFile, histories=60, seed=11, cap=0, phases=False)
    for key in ("histories", "operations", "overlapping", "linearizable", "meetings"):
        record_property(key, getattr(summary, key))
    assert summary.violations == 0, summary.first_violation and summary.first_violation.explain()
    assert summary.unknown == 0
    assert summary.meetings > 0, "the threads met: some calls overlap by construction"
    assert summary.overlapping >= 3 * summary.meetings, "each meeting overlaps its 3 threads' calls"
    assert summary.overlapping > 0, "the threads never overlapped: the run checked nothing concurrent"


@pytest.mark.clauses("C5", "V3", "V5")
def test_a_write_refused_because_another_is_in_flight_is_linearizable_only_in_steps() -> None:
    """set('c') is refused while set('b')'s reservation is in flight (V5: never evicted): no order of
    atomic sets refuses it, so the strict spec rejects the history and the spec in steps accepts it."""
    history = forced_history(HiCacheFile, "refusal")
    assert [(o.name, o.args[0], o.result) for o in history] == [("set", "c", False), ("set", "b", True)]
    assert check(history, STRICT).linearizable is False
    assert check(history, IN_STEPS).linearizable is True


@pytest.mark.clauses("C5", "V3", "V4")
def test_eviction_order_follows_the_order_writes_became_visible() -> None:
    """A write reserved first but published last is the newest file (recency counts from commit)."""
    assert check(forced_history(HiCacheFile, "reservation order"), IN_STEPS).linearizable is True


@pytest.mark.clauses("C5", "V4")
def test_a_store_ranking_writes_by_reservation_is_caught() -> None:
    history = forced_history(RecencyAtReservationStore, "reservation order")
    assert check(history, IN_STEPS).linearizable is False


@pytest.mark.clauses("C5", "V5", "C3")
def test_two_writes_of_one_key_in_flight_keep_the_file_tracked_and_under_the_cap() -> None:
    history, store = forced_run(HiCacheFile, "same key")
    on_disk = sum(len(f.data) for n, f in store._fs.listing(store.directory).items() if n.endswith(".bin"))
    assert store.evictor.total == on_disk, f"tracked {store.evictor.total} bytes, {on_disk} on disk"
    assert check(history, IN_STEPS).linearizable is True


@pytest.mark.clauses("C5", "V5")
def test_a_store_evicting_a_write_in_flight_is_caught() -> None:
    assert check(forced_history(EvictsWritesInFlight, "same key"), IN_STEPS).linearizable is False


@pytest.mark.clauses("C5", "F4", "C3")
def test_a_stale_miss_never_drops_the_entry_of_a_file_published_meanwhile() -> None:
    history, store = forced_run(HiCacheFile, "stale miss")
    on_disk = sum(len(f.data) for n, f in store._fs.listing(store.directory).items() if n.endswith(".bin"))
    assert store.evictor.total == on_disk, f"tracked {store.evictor.total} bytes, {on_disk} on disk"
    assert check(history, IN_STEPS).linearizable is True


@pytest.mark.clauses("C5", "V3", "V6")
def test_a_set_that_finds_the_file_an_eviction_is_removing_is_linearizable_only_in_steps() -> None:
    """Finding 5 (seen by the stress runs: about 1 capped history in 3000 with every core busy): the set
    answers True from a file the eviction removes next; its refresh comes after the eviction."""
    history = forced_found_mid_eviction(HiCacheFile)
    assert sorted((o.thread, o.name, o.args[0], o.result) for o in history) == [
        (0, "get", "a", None),
        (0, "set", "a", True),
        (0, "set", "a", True),
        (0, "set", "b", True),
        (1, "set", "c", True),
    ]
    assert check(history, STRICT).linearizable is False
    assert check(history, IN_STEPS).linearizable is True


@pytest.mark.clauses("C5", "V3", "V4", "V5", "F3", "F4")
def test_real_thread_histories_of_a_capped_store_are_all_linearizable_in_steps(
    record_property: Callable[[str, object], None],
) -> None:
    summary = check_file_store_histories(HiCacheFile, histories=60, seed=5, cap=6)
    for key in ("histories", "operations", "overlapping", "linearizable", "meetings"):
        record_property(key, getattr(summary, key))
    assert summary.violations == 0, summary.first_violation and summary.first_violation.explain()
    assert summary.unknown == 0
    assert summary.meetings > 0, "the threads met: some calls overlap by construction"
    assert summary.overlapping >= 3 * summary.meetings, "each meeting overlaps its 3 threads' calls"
    assert summary.overlapping > 0, "the threads never overlapped: the run checked nothing concurrent"


@pytest.mark.clauses("F8-bg", "C5", "F4", "F6", "F7", "C1")
def test_real_thread_histories_with_a_background_scan_overlapping_the_calls_are_all_linearizable(
    record_property: Callable[[str, object], None],
) -> None:
    summary = check_background_scan_histories(HiCacheFile, histories=40, seed=3)
    for key in ("histories", "operations", "overlapping", "linearizable", "meetings"):
        record_property(key, getattr(summary, key))
    assert summary.violations == 0, summary.first_violation and summary.first_violation.explain()
    assert summary.unknown == 0
    assert summary.meetings > 0, "the threads met: scan steps overlap calls by construction"
    assert summary.overlapping >= 3 * summary.meetings, "each meeting overlaps a scan step and 2 calls"


@pytest.mark.clauses("F8-bg", "C1")
def test_a_scan_that_brings_back_a_page_deleted_meanwhile_is_caught() -> None:
    spec = FileStoreHistorySpec(0, phases=False, files=FOUND)
    history = forced_scan_history(HiCacheFile)
    assert [(o.name, o.result) for o in history if o.name != "scan"] == [("delete", True), ("exists", False)]
    assert check(history, spec).linearizable is True
    wrong = forced_scan_history(ScanReadoptsRemovedPages)
    assert [(o.name, o.result) for o in wrong if o.name != "scan"] == [("delete", True), ("exists", True)]
    assert check(wrong, spec).linearizable is False
