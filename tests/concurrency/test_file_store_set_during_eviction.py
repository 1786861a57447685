"""A ``set`` of a believed key that probes while an eviction of that key is under way (C5, V6, F6).

The eviction drops each victim's belief before its unlink (V6), under the
store's lock; a ``set`` runs its belief check and its ``stat`` outside that
lock.  Between the two, the ``set`` finds no belief, stats (F6), finds the file
that is about to go and answers True (F3: the key already exists); its recency
refresh comes after the eviction and finds no entry.  The key is then gone.

The spec in steps took a believed key's ``set`` as one atomic refresh at its
start, so it rejected this history, which SEMANTICS allows; it now lets such a
``set`` probe and refresh at its end, as it already did for a present key with
no belief.  Found by a random search of schedules, then forced here with the
fake filesystem's hooks; it was the one violation in 60 real-thread histories
of ``test_real_thread_histories_of_a_store_are_all_linearizable[capped-in-steps]``.
"""

from __future__ import annotations

import threading

import pytest

from hicache.file_store import HiCacheFile
from spec.linearizability.checker import Operation
from spec.linearizability.file_store import CAP, DIRECTORY, VALUE_OF, FileStoreHistorySpec
from spec.linearizability.file_store import check_file_store_history as check
from spec.linearizability.recording import HistoryRecorder
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

pytestmark = pytest.mark.threads

STRICT, IN_STEPS = FileStoreHistorySpec(phases=False), FileStoreHistorySpec()


def _set_during_eviction() -> tuple[list[Operation], HiCacheFile]:
    """``a`` then ``c`` written (5 bytes, LRU a, c); thread 1's ``set('b')`` evicts both and is held at
    the unlink of ``a`` (its belief already dropped); thread 0's ``set('a')`` stats ``a`` meanwhile."""
    clock = FakeClock(1000.0)
    fs = FakeFileSystem(clock)
    at_unlink, probed = threading.Event(), threading.Event()

    def before(op: str, path: str) -> None:
        if op == "unlink" and path.endswith("/a_ns.bin") and threading.current_thread().name == "evictor":
            at_unlink.set()
            assert probed.wait(timeout=10), "the set of 'a' never probed"

    def after(op: str, path: str) -> None:
        if op == "stat" and path.endswith("/a_ns.bin") and threading.current_thread().name == "prober":
            probed.set()

    config = {"max_size": CAP, "eviction_ratio": 1.0, "enable_metadata_cache": True, "metadata_ttl": -1}
    store = HiCacheFile(DIRECTORY, namespace="_ns", extra_config=config, fs=fs, clock=clock)
    recorder = HistoryRecorder()
    for key in "ac":
        recorder.perform(0, store, "set", key, VALUE_OF[key])
    fs.before, fs.after = before, after
    evictor = threading.Thread(
        target=recorder.perform, args=(1, store, "set", "b", VALUE_OF["b"]), name="evictor"
    )
    evictor.start()
    assert at_unlink.wait(timeout=10)
    prober = threading.Thread(
        target=recorder.perform, args=(0, store, "set", "a", VALUE_OF["a"]), name="prober"
    )
    prober.start()
    prober.join(timeout=10)
    evictor.join(timeout=10)
    assert not prober.is_alive() and not evictor.is_alive()
    fs.before = fs.after = None
    recorder.perform(0, store, "exists", "a")
    return list(recorder.operations), store


@pytest.mark.clauses("C5", "V6", "F6", "F3", "C1")
def test_a_set_that_probes_a_victim_before_its_unlink_is_linearizable_in_steps() -> None:
    history, store = _set_during_eviction()
    answers = [(o.thread, o.name, o.args[0], o.result) for o in history]
    assert answers[:2] == [(0, "set", "a", True), (0, "set", "c", True)]
    assert sorted(answers[2:4]) == [  # the two threads may return in either order
        (0, "set", "a", True),  # the file was still there when it looked: the key existed (F3)
        (1, "set", "b", True),
    ]
    assert answers[4] == (0, "exists", "a", False)  # evicted: no belief planted behind the eviction (C1)
    assert "a" not in believed(store) and "c" not in believed(store)
    assert [e.key for e in store.evictor.snapshot()] == ["b"]
    store.check_invariants()
    assert check(history, STRICT).linearizable is False
    assert check(history, IN_STEPS).linearizable is True


def _op(thread: int, name: str, key: str, result: object, call: int, ret: int) -> Operation:
    args = (key, VALUE_OF[key]) if name == "set" else (key,)
    return Operation(thread, name, args, result, call, ret)


@pytest.mark.clauses("C5", "V6", "F6")
def test_the_minimal_history_of_a_set_during_an_eviction_is_linearizable_in_steps() -> None:
    """The shortest history the schedule search found (logical times): t2's ``set('a')`` lies inside
    t1's ``set('b')``, which evicts ``a`` and ``c``; ``a`` is gone afterwards.  A refresh of ``a`` at the
    start of its set would have spared it (LRU c, a: evicting c makes room)."""
    history = [
        _op(2, "set", "c", True, 0, 4),
        _op(1, "set", "a", True, 1, 2),
        _op(1, "set", "b", True, 3, 8),
        _op(2, "set", "a", True, 5, 6),
        _op(2, "exists", "a", False, 7, 9),
    ]
    assert check(history, STRICT).linearizable is False
    assert check(history, IN_STEPS).linearizable is True


@pytest.mark.clauses("C5", "F3", "V3")
def test_a_set_of_a_believed_key_still_cannot_lose_its_refresh_without_an_eviction() -> None:
    """The probe outcome is no licence to drop a refresh: with nothing removing ``a``, a ``set('a')``
    that ended before ``set('b')`` began made ``a`` the most recently used, so only ``c`` may go."""
    history = [
        _op(0, "set", "a", True, 0, 1),
        _op(0, "set", "c", True, 2, 3),
        _op(0, "set", "a", True, 4, 5),
        _op(0, "set", "b", True, 6, 7),
        _op(0, "exists", "a", False, 8, 9),
    ]
    assert check(history, IN_STEPS).linearizable is False
