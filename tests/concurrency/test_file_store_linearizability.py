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
from dataclasses import replace
from typing import Any

import pytest

from hicache.file_store import HiCacheFile
from spec.linearizability.checker import Operation
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


@pytest.mark.parametrize(
    ("cap", "phases", "seed"),
    [
        # Without a cap every history is linearizable with every call atomic.
        pytest.param(
            0, False, 11, id="uncapped-atomic", marks=pytest.mark.clauses("C5", "F3", "F4", "F6", "F7")
        ),
        # With a cap, in the steps the evictor's contract describes.
        pytest.param(
            6, True, 5, id="capped-in-steps", marks=pytest.mark.clauses("C5", "V3", "V4", "V5", "F3", "F4")
        ),
    ],
)
def test_real_thread_histories_of_a_store_are_all_linearizable(
    cap: int, phases: bool, seed: int, record_property: Callable[[str, object], None]
) -> None:
    summary = check_file_store_histories(HiCacheFile, histories=60, seed=seed, cap=cap, phases=phases)
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


def _op(thread: int, name: str, args: tuple[Any, ...], result: Any, call: float, ret: float) -> Operation:
    return Operation(thread, name, args, result, call, ret)


_WRITTEN = [_op(1, "set", ("a", b"xy"), True, 0, 1), _op(1, "set", ("b", b"abcd"), True, 2, 3)]


@pytest.mark.clauses("C5", "F5")
def test_a_batch_is_its_keys_calls_in_order_torn_between_keys_but_never_reordered() -> None:
    """A batch holds no lock across its keys (C5), so a delete may fall between two keys of one batch_get;
    but its keys are read in order (F5): [None, b'abcd'] while b, then a, is deleted needs b read first."""
    torn = [
        *_WRITTEN,
        _op(0, "batch_get", ("a", "b"), [b"xy", None], 4, 10),
        _op(1, "delete", ("b",), True, 5, 6),
        _op(1, "delete", ("a",), True, 7, 8),
    ]
    assert check(torn, IN_STEPS).linearizable is True
    reordered = [*torn[:2], replace(torn[2], result=[None, b"abcd"]), *torn[3:]]
    assert check(reordered, IN_STEPS).linearizable is False
    assert check(reordered, STRICT).linearizable is False
    # batch_set's keys in order too: b seen written, then a not yet, is no order of set(a), set(b)
    written_late = [
        _op(0, "batch_set", ("a", "b"), [True, True], 0, 10),
        _op(1, "exists", ("b",), True, 1, 2),
        _op(1, "exists", ("a",), False, 3, 4),
    ]
    assert check(written_late, IN_STEPS).linearizable is False
    assert check(written_late[:2], IN_STEPS).linearizable is True


@pytest.mark.clauses("C5", "F5")
def test_a_batch_exists_count_is_its_prefix_of_exists_calls_and_an_unfit_answer_has_no_order() -> None:
    counted = [*_WRITTEN, _op(0, "batch_exists", ("a", "c", "b"), 1, 4, 5)]
    assert check(counted, IN_STEPS).linearizable is True
    for wrong in (2, 3, 4, -1, True):  # c was never written; a count past the keys; a bool is no count
        assert check([*_WRITTEN, replace(counted[-1], result=wrong)], IN_STEPS).linearizable is False
    assert check([*_WRITTEN, _op(0, "batch_get", ("a", "b"), [b"xy"], 4, 5)], IN_STEPS).linearizable is False


@pytest.mark.clauses("C5", "F4", "F7")
def test_get_into_reads_only_a_file_of_its_buffers_size_and_clear_is_one_instant() -> None:
    history = [
        *_WRITTEN,
        _op(0, "get_into", ("a", 3), None, 4, 5),  # 2 bytes on disk: not read
        _op(0, "get_into", ("a", 2), b"xy", 6, 7),
        _op(0, "clear", (), True, 8, 9),
        _op(0, "get_into", ("b", 4), None, 10, 11),
    ]
    assert check(history, IN_STEPS).linearizable is True
    assert check(history, STRICT).linearizable is True
    assert check([*history[:2], replace(history[2], result=b"xy")], IN_STEPS).linearizable is False
    assert check([*history[:5], replace(history[5], result=b"abcd")], IN_STEPS).linearizable is False
