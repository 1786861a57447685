"""File store histories (C5): real threads on one store over the in-memory filesystem, checked against
``spec.file_store.FileStoreModel`` run as a sequential spec.

The world is closed (no other process, no fault, a frozen clock), so every
answer of ``set``/``get``/``exists``/``delete`` must be one that some order of
the same calls, respecting real time, gives on the model.  A cap that two
values overflow makes eviction (and so the LRU order) part of every answer.
"""

from __future__ import annotations

import inspect
import random
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from hicache.file_store import HiCacheFile
from spec.fake_fs import FakeFileSystem
from spec.fakes import FakeClock
from spec.file_store import FileStoreModel
from spec.linearizability.checker import HistoryRecorder, Operation, check_history, run_threads
from spec.linearizability.metadata_cache import RunSummary, Script, switch_often

__all__ = [
    "FileStoreHistorySpec",
    "check_file_store_histories",
    "file_store_scripts",
    "forced_history",
    "forced_run",
]


def model_keys(keys: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``keys=`` for a ``FileStoreModel`` that recognizes its files by the keys in use (newer models)."""
    return {"keys": keys} if "keys" in inspect.signature(FileStoreModel).parameters else {}


DIRECTORY = "/cache"
# Content-addressed, as the engine's page keys are: one value per key (two concurrent sets of one key
# with different bytes would both be acknowledged, last rename wins: outside the store's contract).
VALUE_OF = {"a": b"xy", "b": b"abcd", "c": b"xyz"}
KEYS = tuple(VALUE_OF)
CAP = 6
State = tuple[tuple[tuple[str, tuple[bytes, float]], ...], tuple[tuple[str, int, bool], ...], tuple[str, ...]]


class FileStoreHistorySpec:
    """The model as a step function over hashable states (files, evictor entries, believed keys).

    ``refusals=True`` relaxes the spec by one nondeterministic outcome: a ``set``
    that would write may instead answer False, after evicting any least recently
    used prefix of the evictable entries.  That is what the store does when
    another thread's write is *in flight* (reserved, not committed: V5 forbids
    evicting it) and the bytes no longer fit under the cap, a state no
    sequential order ever shows, since a sequential ``set`` commits before the
    next call begins.
    """

    def __init__(self, cap: int = CAP, metadata: bool = True, *, refusals: bool = False) -> None:
        self.cap, self.metadata, self.refusals = cap, metadata, refusals
        self.clock = FakeClock(1000.0)  # frozen: beliefs never expire (TTL -1 anyway)
        self.initial: State = ((), (), ())

    def _model(self, state: State) -> FileStoreModel:
        files, lru, believed = state
        model = FileStoreModel(
            namespace="_ns",
            cap=self.cap,
            ratio=1.0,
            min_free=0,
            disk_size=1 << 50,
            metadata=self.metadata,
            ttl=-1,
            temp_max_age=3600.0,
            clock=self.clock,
            **model_keys(KEYS),
        )
        model.files, model.lru = dict(files), list(lru)
        model.beliefs = dict.fromkeys(believed, 1000.0)
        return model

    @staticmethod
    def _state(model: FileStoreModel) -> State:
        return (
            tuple(sorted(model.files.items())),
            tuple(model.lru),
            tuple(sorted(str(k) for k in model.beliefs)),
        )

    def step(self, state: State, name: str, args: tuple[Hashable, ...]) -> tuple[State, Any]:
        if name not in ("set", "get", "exists", "delete"):
            raise ValueError(f"unknown operation {name!r}")
        model = self._model(state)
        answer = getattr(model, name)(*args)
        return self._state(model), answer

    def outcomes(self, state: State, name: str, args: tuple[Hashable, ...]) -> list[tuple[State, Any]]:
        """The step, plus (with ``refusals``) every refusal of a ``set`` that would write."""
        written = self.step(state, name, args)
        key = str(args[0])
        before = self._model(state)
        if not self.refusals or name != "set" or before.believed(key) or before.name(key) in before.files:
            return [written]
        before._missing(key)  # the probe found no file
        victims = [k for k, _size, in_flight in before.lru if not in_flight]
        refusals = []
        for count in range(len(victims) + 1):
            model = self._model(self._state(before))
            for victim in victims[:count]:
                model._apply([e for e in model.lru if e[0] != victim], [victim])
            refusals.append((self._state(model), False))
        return [written, *refusals]


def file_store_scripts(rng: random.Random, threads: int, length: int) -> list[Script]:
    """One script per thread: sets, gets, exists and a few deletes over 3 content-addressed keys."""
    scripts: list[Script] = []
    for _ in range(threads):
        script: Script = []
        for _ in range(length):
            roll, key = rng.random(), rng.choice(KEYS)
            if roll < 0.4:
                script.append(("set", (key, VALUE_OF[key])))
            elif roll < 0.65:
                script.append(("get", (key,)))
            elif roll < 0.9:
                script.append(("exists", (key,)))
            else:
                script.append(("delete", (key,)))
        scripts.append(script)
    return scripts


def check_file_store_histories(
    factory: Callable[..., Any] = HiCacheFile,
    *,
    histories: int,
    seed: int = 0,
    threads: int = 3,
    length: int = 12,
    cap: int = CAP,
    refusals: bool = True,
    budget_seconds: float = 5.0,
) -> RunSummary:
    """Record ``histories`` real-thread runs on fresh stores and check each one against the model."""
    summary = RunSummary()
    rng = random.Random(seed)
    spec = FileStoreHistorySpec(cap, refusals=refusals)
    start = time.perf_counter()
    config = {"max_size": cap, "eviction_ratio": 1.0, "enable_metadata_cache": True, "metadata_ttl": -1}
    with switch_often(1e-6):
        for _ in range(histories):
            clock = FakeClock(1000.0)
            store = factory(
                DIRECTORY, namespace="_ns", extra_config=config, fs=FakeFileSystem(clock), clock=clock
            )
            history = run_threads(HistoryRecorder(), store, file_store_scripts(rng, threads, length))
            summary.record(history, check_history(history, spec, budget_seconds))
    summary.seconds = time.perf_counter() - start
    return summary


def _held_at_write(factory: Callable[..., Any]) -> tuple[Any, threading.Event, threading.Event]:
    """A capped store whose ``held-writer`` thread's ``set`` stops at its temp-file write (reserved)."""
    reserved, resume = threading.Event(), threading.Event()
    clock = FakeClock(1000.0)
    fs = FakeFileSystem(clock)

    def hold(op: str, path: str) -> None:
        if op == "write" and threading.current_thread().name == "held-writer":
            reserved.set()
            resume.wait(timeout=10)

    def hold_after_read(op: str, path: str) -> None:
        if op == "read" and threading.current_thread().name == "held-reader":
            reserved.set()
            resume.wait(timeout=10)

    fs.before = hold
    fs.after = hold_after_read
    config = {"max_size": CAP, "eviction_ratio": 1.0, "enable_metadata_cache": True, "metadata_ttl": -1}
    store = factory(DIRECTORY, namespace="_ns", extra_config=config, fs=fs, clock=clock)
    return store, reserved, resume


def forced_history(factory: Callable[..., Any], divergence: str) -> list[Operation]:
    """The history of :func:`forced_run`."""
    return forced_run(factory, divergence)[0]


def forced_run(factory: Callable[..., Any], divergence: str) -> tuple[list[Operation], Any]:
    """One of the two divergences of a capped store from every sequential order, forced with events.

    ``refusal``: thread 0's ``set('b')`` (4 bytes) is held after its reservation;
    thread 1's ``set('c')`` (3 bytes) cannot evict the write in flight and is
    refused (4 + 3 > 6), which no sequential order does.

    ``reservation order``: thread 0's ``set('a')`` is held after reserving; thread
    1 writes ``b`` and sees ``a`` absent; then ``a`` is published.  The evictor
    ranks ``a`` (reserved first) older than ``b``, but every order that explains
    ``exists('a') -> False`` puts ``a``'s set after ``b``'s: so ``set('c')`` must
    evict ``b`` only, and it evicts both.  (Fixed: recency now counts from commit.)

    ``same key``: thread 0's ``set('c')`` is held after reserving; thread 1's
    ``set('c')`` reserves the *same* evictor entry, writes and commits it, so the
    entry is no longer in flight although thread 0's write still is; thread 1's
    ``set('b')`` then evicts ``c`` (V5 broken).  Thread 0 publishes ``c`` and its
    commit finds no entry: ``c`` and ``b`` are both on disk (7 bytes over a cap of
    6), ``c`` untracked, and no order explains ``exists('c')`` and ``exists('b')``
    both True.

    ``stale miss``: thread 0's ``get('c')`` finds no file and is held before it
    forgets ``c``; thread 1's ``set('c')`` publishes and commits ``c``; thread 0
    then drops ``c``'s (committed) entry although the file now exists, so the
    next ``set('b')`` does not evict it: 7 bytes on disk over a cap of 6, ``c``
    untracked, and ``exists('c')`` True where every order says it was evicted.
    """
    recorder = HistoryRecorder()
    first = {"refusal": "b", "reservation order": "a", "same key": "c", "stale miss": "c"}[divergence]
    store, reserved, resume = _held_at_write(factory)
    if divergence == "stale miss":  # thread 0 reads c, finds it missing, and is held before it forgets c
        worker = threading.Thread(target=recorder.perform, args=(0, store, "get", "c"), name="held-reader")
    else:
        worker = threading.Thread(
            target=recorder.perform, args=(0, store, "set", first, VALUE_OF[first]), name="held-writer"
        )
    worker.start()
    reserved.wait(timeout=10)
    if divergence in ("refusal", "stale miss"):
        recorder.perform(1, store, "set", "c", VALUE_OF["c"])
    elif divergence == "same key":
        recorder.perform(1, store, "set", "c", VALUE_OF["c"])  # shares thread 0's entry, and commits it
        recorder.perform(1, store, "set", "b", VALUE_OF["b"])  # 4 + 3 > 6: evicts c, whose write is in flight
    else:
        recorder.perform(1, store, "set", "b", VALUE_OF["b"])
        recorder.perform(1, store, "exists", "a")
    resume.set()
    worker.join()
    if divergence == "reservation order":
        recorder.perform(1, store, "set", "c", VALUE_OF["c"])
        recorder.perform(1, store, "exists", "a")
    elif divergence == "same key":
        recorder.perform(1, store, "exists", "c")
        recorder.perform(1, store, "exists", "b")
    elif divergence == "stale miss":
        recorder.perform(1, store, "set", "b", VALUE_OF["b"])  # 3 + 4 > 6 should evict c
        recorder.perform(1, store, "exists", "c")
    return list(recorder.operations), store
