"""Targets as they are (O10): one probe of the target, read by every mode.

Caches written the way people write them (``tests/oracle/_user_caches.py``: the seed's four methods,
no ``max_entries``, no batches) are judged under ``--threads 4`` from what the probe found: no call is
made up for a method the target lacks, a constructor without ``max_entries`` runs unbounded, M7 is
blamed only for what threads show, and a failure carries its clauses in JSON in every mode.  Each of
these tests fails on the oracle before the probe was shared (an AttributeError for ``contains_many``
blamed on M7, a TypeError for ``max_entries``, ``"clauses": []``).
"""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any

import pytest

from hicache.metadata_cache import MetadataCache
from spec.linearizability.checker import Operation
from spec.oracle import check, check_threads, replay_threads
from spec.oracle._threads import ThreadsResult
from tests.oracle import _user_caches

pytestmark = pytest.mark.threads

USER = "tests.oracle._user_caches"
NO_B1 = ("B1",)  # they validate nothing (O3)
HISTORIES = 150  # enough for each verdict below at seed 0 (the lock-free race shows by history 80)
SEQUENTIAL = 60  # the sequential check's examples, where the threads run hands over to it (M3 by then)


def _overlap(history: list[Operation]) -> bool:
    """Two calls of different threads overlap in time."""
    calls = [op for op in history if op.name != "advance" and op.ret is not None]
    return any(
        a.thread != b.thread and a.call < b.ret and b.call < a.ret  # type: ignore[operator]
        for i, a in enumerate(calls)
        for b in calls[i + 1 :]
    )


@pytest.mark.clauses("O10", "M7")
def test_a_locked_cache_with_only_the_seeds_methods_passes_sequentially_and_under_threads() -> None:
    sequential = check("metadata-cache", _user_caches.LockedCache, leave_out=NO_B1, max_examples=50)
    assert sequential.verdict == "PASS", sequential.summary()
    threads = check_threads(
        "metadata-cache", _user_caches.LockedCache, threads=4, histories=HISTORIES, leave_out=NO_B1
    )
    assert threads.verdict == "PASS", threads.summary()
    assert threads.passed_clauses == ["M7"]  # not M9: it has no batches
    assert {"max_entries", "contains_many", "add_many"} <= set(threads.missing)


@pytest.mark.clauses("O10", "M3", "M7")
def test_a_seed_shaped_cache_fails_its_own_clause_under_threads_never_m7_and_no_traceback() -> None:
    result = check_threads(
        "metadata-cache",
        _user_caches.SeedShapedCache,
        threads=4,
        histories=HISTORIES,
        leave_out=NO_B1,
        max_examples=SEQUENTIAL,
    )
    assert result.verdict == "FAIL", result.summary()
    assert "M7" not in result.clauses, result.summary()
    assert all("M7" not in f.clauses and f.clauses for f in result.failures), result.summary()
    assert result.clauses[0] == "M3", result.summary()  # the add that kept the stale birth (O11)
    assert result.failures[0].calls <= 4, result.summary()
    assert "Traceback" not in result.summary()
    assert "M7" in result.not_checked  # not blamed: one thread shows it (O6)


@pytest.mark.slow("a threads search on the engine release's MetadataCache, then its sequential check")
@pytest.mark.clauses("O10", "M3", "M7")
def test_the_engine_releases_metadata_cache_under_threads_fails_m3_never_m7(
    engine_storage: ModuleType,
) -> None:
    result = check_threads(
        "metadata-cache",
        engine_storage.MetadataCache,
        threads=4,
        histories=HISTORIES,
        leave_out=NO_B1,
        max_examples=SEQUENTIAL,
    )
    assert result.verdict == "FAIL", result.summary()
    assert result.clauses[0] == "M3", result.summary()
    assert result.failures[0].calls <= 4, result.summary()
    assert all(f.clauses and "M7" not in f.clauses for f in result.failures), result.summary()
    assert "Traceback" not in result.summary()


@pytest.mark.clauses("O10", "O6", "M7")
def test_a_lock_free_cache_fails_m7_with_a_real_race_whose_calls_one_at_a_time_pass() -> None:
    sequential = check("metadata-cache", _user_caches.LockFreeCache, leave_out=NO_B1, max_examples=50)
    assert sequential.verdict == "PASS", sequential.summary()
    result = check_threads(
        "metadata-cache", _user_caches.LockFreeCache, threads=4, histories=HISTORIES, leave_out=NO_B1
    )
    assert result.verdict == "FAIL", result.summary()
    assert result.clauses == ["M7"], result.summary()
    assert "no order of the calls" in result.message  # a race, not an exception
    assert isinstance(result, ThreadsResult)
    history = result.picture_history()[0]
    assert _overlap(history), result.counterexample
    # The same calls made one at a time, in the order they were called, on one thread: they pass.
    script = [("__len__" if op.name == "len" else op.name, op.args) for op in history]
    config = {"ttl_seconds": 0.5, "max_entries": None}
    alone = replay_threads(
        "metadata-cache", f"{USER}:LockFreeCache", config=config, scripts=[script], schedule=[]
    )
    assert alone is None, alone


class _BatchesRaise(MetadataCache):
    """The project's cache with batches that raise: a run that calls one fails."""

    def contains_many(self, keys: Any) -> list[bool]:
        raise RuntimeError("contains_many must not be called with M9 left out")

    def add_many(self, keys: Any) -> None:
        raise RuntimeError("add_many must not be called with M9 left out")


@pytest.mark.clauses("O10", "M9")
def test_leave_out_m9_stops_the_batches_under_threads_as_it_does_sequentially() -> None:
    caught = check_threads("metadata-cache", _BatchesRaise, threads=4, histories=40)
    assert caught.verdict == "FAIL", caught.summary()  # without --leave-out the batches are called
    result = check_threads("metadata-cache", _BatchesRaise, threads=4, histories=60, leave_out=["M9"])
    assert result.verdict == "PASS", result.summary()
    assert result.passed_clauses == ["M7"]
    assert "M9" in result.left_out


def _race_a_native_call(native_calls_progress: bool) -> tuple[list[int], list[str]]:
    """Two workers under one Scheduler: worker 0 stands in a C call (a real ``Event.wait``) that this thread
    ends only once the scheduler has decided: it has handed over to worker 1, or it has looked at worker 0
    many times without handing over.  The picks made by then, and what the workers did, in order."""
    from spec.oracle import _scheduler

    order: list[str] = []
    release, decided = threading.Event(), threading.Event()
    scheduler = _scheduler.Scheduler(
        2, lambda ready, last, where: ready[0], native_calls_progress=native_calls_progress
    )
    settled = scheduler._settled
    looks = 0

    def counting(seen: dict[int, tuple[int, int, int]]) -> bool:  # under the scheduler's mutex
        nonlocal looks
        picked = len(scheduler.schedule.picks)
        looks += picked == 1  # looks at worker 0 in its call (the first pick is always worker 0)
        if picked > 1 or looks >= 4 * _scheduler.STILL_LOOKS:
            decided.set()
        return settled(seen)

    scheduler._settled = counting  # type: ignore[method-assign,assignment]

    def worker(index: int) -> None:
        scheduler.enter(index)
        scheduler.point("call")
        if index == 0:
            release.wait()  # a native call under way (torch, numpy's write): the interpreter lock let go
        order.append(f"t{index}")
        scheduler.finished(index)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(2)]
    for index, thread in enumerate(threads):
        thread.start()
        scheduler.idents[index] = thread.ident or -1
    runner = threading.Thread(target=scheduler.run, args=(lambda: None,), daemon=True)
    runner.start()
    decided.wait()
    picks = list(scheduler.schedule.picks)
    release.set()
    for thread in [*threads, runner]:
        thread.join()
    return picks, order


@pytest.mark.clauses("O6", "O12")
def test_a_native_call_under_way_is_waited_for_in_the_engine_form_whatever_its_length() -> None:
    # The engine form: worker 1 is not picked while worker 0 is in its C call, however long it takes.
    assert _race_a_native_call(native_calls_progress=True) == ([0], ["t0", "t1"])
    # Elsewhere a call standing still in C is a lock held elsewhere: the scheduler picks another worker.
    picks, order = _race_a_native_call(native_calls_progress=False)
    assert picks == [0, 1] and sorted(order) == ["t0", "t1"]
