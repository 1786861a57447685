"""File store histories (C5): real threads on one store over the in-memory filesystem, checked against
``spec.models.file_store.FileStoreModel`` run as a sequential spec.

The world is closed (no other process, no fault, a frozen clock), so every
answer of ``set``/``get``/``exists``/``delete`` (and, in the oracle's
``--threads`` scripts, ``get_into``, ``clear`` and the batches, each batch as
its keys' calls) must be one that some order of the same calls, respecting real
time, gives on the model.  A cap that two values overflow makes eviction (and
so the LRU order) part of every answer.

F8-bg (:func:`check_background_scan_histories`): a store scanning in the background, its directory
holding pages when it was built, one of the recorded threads stepping its scan (``scan``, a batch) among
the others' calls, meeting them every few calls.  Uncapped, the scan's adoptions change no answer of a
correct store (each belief it teaches is of a page on disk, in this closed world), so the spec takes a
``scan`` as a step that changes nothing: a store whose scan brings back a page deleted meanwhile answers
``exists`` True for a missing file, which no order explains (:func:`forced_scan_history`).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hicache.file_evictor import LRUFileEvictor
from hicache.file_store import HiCacheFile

from ..models.file_store import FileStoreModel
from ..world.clock import FakeClock
from ..world.filesystem import FakeFileSystem
from .checker import MAX_STEPS, Operation, Verdict, check_history
from .metadata_cache import MEET_EVERY, RunSummary, record_histories
from .recording import SAFETY_TIMEOUT, HistoryRecorder
from .scripts import Call, Pick, Script, below, weighted_scripts

__all__ = [
    "BATCHES",
    "FileStoreHistorySpec",
    "RecencyAtReservationStore",
    "check_background_scan_histories",
    "check_file_store_histories",
    "file_store_scripts",
    "forced_found_mid_eviction",
    "forced_history",
    "forced_run",
    "forced_scan_history",
    "in_phases",
    "spelled_out",
    "store_call",
]


DIRECTORY = "/cache"
# Content-addressed, as the engine's page keys are: one value per key (two concurrent sets of one key
# with different bytes would both be acknowledged, last rename wins: outside the store's contract).
VALUE_OF = {"a": b"xy", "b": b"abcd", "c": b"xyz"}
KEYS = tuple(VALUE_OF)
CAP = 6
Pending = tuple[tuple[int, str, str], ...]  # (thread, key, mode) per set begun and not ended
# The mode a set_begin leaves -> the mode after its set_publish step (only a write shows a file).
PUBLISHED = {
    "done": "done, published",
    "found": "found, published",
    "refused": "refused, published",
    "writing": "published",
}
State = tuple[
    tuple[tuple[str, tuple[bytes, float]], ...],  # files
    tuple[tuple[str, int, bool], ...],  # evictor entries, LRU first
    tuple[str, ...],  # believed keys
    tuple[tuple[str, int], ...],  # writes in flight per key
    tuple[str, ...],  # keys in flight that one of their writers has published
    Pending,
]
Cursors = tuple[tuple[Hashable, str, int], ...]  # (thread, chain, steps taken) of the batches under way


BATCHES = ("batch_set", "batch_get", "batch_exists")  # F5: their keys are the operation's arguments


@dataclass(frozen=True)
class Slot:
    """Where a step of a batch stands in its thread's program order: the ``position``-th step of its
    ``chain`` (the batch's steps in one chain, or a ``batch_get``'s reads in one and the lessons they
    teach in another); ``last`` ends the chain.  The last argument of the step's operation."""

    thread: Hashable
    chain: str
    position: int
    last: bool


def _chained(ops: list[Operation], thread: Hashable, chain: str) -> list[Operation]:
    return [
        replace(op, args=(*op.args, Slot(thread, chain, i, i == len(ops) - 1))) for i, op in enumerate(ops)
    ]


def _phases(op: Operation) -> list[Operation]:
    """A ``set`` as ``set_begin``, ``set_publish``, ``set_end``; a ``get`` (``get_into``) as ``get_read``,
    ``get_end``; any other call as it is.  The thread goes into the steps' arguments."""
    args = (op.thread, *op.args)
    if op.name == "set":
        begun = [replace(op, name=phase, args=args, result=None) for phase in ("set_begin", "set_publish")]
        return [*begun, replace(op, name="set_end", args=args)]
    if op.name in ("get", "get_into"):
        return [
            replace(op, name="get_read", args=args),
            replace(op, name="get_end", args=args[:2], result=None),
        ]
    return [op]


def _keys_calls(op: Operation) -> list[Operation] | None:
    """A batch (F5) as its keys' own calls, in the batch's interval: a ``batch_set``'s ``set`` of each key
    (its value ``VALUE_OF[key]``: content-addressed), a ``batch_get``'s ``get`` of each, and a
    ``batch_exists(keys) -> n``'s ``exists`` of its first ``n`` keys (True) and of the next (False)
    (a ``batch_set`` that stopped at its first refusal, :func:`_stopped_at_refusal`: its first keys'); a
    batch that never returned, every key's (each may or may not have taken effect).  None: its answer
    does not fit its keys (not one answer per key, a count out of range)."""
    keys, answer, returned = op.args, op.result, op.ret is not None
    if op.name == "batch_exists":
        if not returned:
            return [replace(op, name="exists", args=(k,)) for k in keys]
        if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer <= len(keys):
            return None
        return [
            replace(op, name="exists", args=(k,), result=i < answer) for i, k in enumerate(keys[: answer + 1])
        ]
    if op.name == "batch_set" and returned and isinstance(answer, list) and _stopped_at_refusal(answer, keys):
        keys = keys[: len(answer)]  # O12: the engine's batch_set makes no write after a refused one
    if returned and not (isinstance(answer, list) and len(answer) == len(keys)):
        return None
    single = op.name.removeprefix("batch_")
    return [
        replace(
            op,
            name=single,
            args=(key, VALUE_OF[str(key)]) if single == "set" else (key,),
            result=answer[i] if returned else answer,
        )
        for i, key in enumerate(keys)
    ]


def _stopped_at_refusal(answer: list[Any], keys: Sequence[Hashable]) -> bool:
    """A ``batch_set`` answered for its first keys only, the last of them refused: a store that, as the
    engine's does (O12), makes no write after the first refused one; its steps are those keys' sets."""
    return 0 < len(answer) < len(keys) and answer[-1] is False and all(a is True for a in answer[:-1])


def spelled_out(history: Sequence[Operation], phases: bool = True) -> list[Operation]:
    """``history`` in the operations :class:`FileStoreHistorySpec` steps: each batch made of its keys'
    calls in program order (a batch holds no lock across its keys, C5: only each key's steps are atomic,
    in the order the store takes them, F5), and with ``phases`` every ``set`` and ``get`` in its steps
    (:func:`_phases`).  The steps share their call's interval.  A batch's keys are distinct (the
    workloads'); one whose answer does not fit its keys stays whole, and no step explains it."""
    out: list[Operation] = []
    for op in history:
        calls = _keys_calls(op) if op.name in BATCHES else None
        if calls is None:
            out += _phases(op) if phases else [op]
        elif not phases or op.name == "batch_exists":
            out += _chained(calls, op.thread, "batch")
        elif op.name == "batch_set":
            out += _chained([step for call in calls for step in _phases(call)], op.thread, "batch")
        else:  # batch_get: the reads in order, and the lessons in order, each after its read
            steps = [_phases(call) for call in calls]
            out += _chained([read for read, _end in steps], op.thread, "reads")
            out += _chained([end for _read, end in steps], op.thread, "lessons")
    return out


def in_phases(history: Sequence[Operation]) -> list[Operation]:
    """``history`` with every ``set`` split into ``set_begin``, ``set_publish`` and ``set_end`` and every
    ``get`` into ``get_read`` and ``get_end`` (batches by key): :func:`spelled_out` with phases."""
    return spelled_out(history)


class FileStoreHistorySpec:
    """The model as a step function over hashable states (files, evictor entries, beliefs, writes open).

    ``exists`` and ``delete`` are atomic.  ``set`` and ``get`` are not: a store
    that does its filesystem calls outside its lock cannot make a probe, a
    reservation, a rename and the evictor's bookkeeping one instant, and the
    evictor's own contract (V2-V5) has writes *in flight*, reserved and not yet
    committed, which hold their room and are never victims.  So each is checked
    as the atomic steps it is made of, in this order inside its call (see
    :func:`in_phases`):

    * ``set_begin``: a believed key is refreshed (the set will answer True);
      a key whose file is present is *found* (refreshed at the end, below); a
      missing key is reserved as V3 says, evicting least recently used entries
      that are not in flight, or refused when they cannot make room;
    * ``set_publish``: the rename: a reserved write's file appears (readers see
      it) while its entry is still in flight (a no-op for the other outcomes);
    * ``set_end``: the commit (V4: no longer in flight, most recently used from
      then on) and the key believed (F3), or, when a removal took the published
      file first, the entry dropped (C3); a found key is refreshed as a read is;
      the answer is True, or False for a refused write;
    * ``get_read``: the read: the value, or None and the F4 miss (belief and
      entry dropped) when the file is missing;
    * ``get_end``: a hit refreshes recency and teaches the belief, if the file is
      still there (a key evicted or deleted since is not brought back: C1, C3).

    ``get_into(key, size)`` (the size of the buffer; its answer the bytes it read, None for False) is a
    ``get`` whose read finds a file of another size unread: no lesson, no miss (F4).  ``clear`` is one
    instant (the store holds its lock throughout); writes in flight keep their entries (V2).  A batch is
    its keys' own calls, in the order the store takes them (:func:`spelled_out`).

    Each step is the model's own rule (``spec.models.file_store``); only their timing
    is relaxed, and only within each call's interval.

    ``phases=False`` is the strict reading: every call is one atomic step, so
    no write is ever in flight while another call runs.  No capped store meets
    it (a ``set`` refused for room another write in flight holds has no sequential
    order); the tests keep it to show that divergence.
    """

    def __init__(
        self,
        cap: int = CAP,
        metadata: bool = True,
        *,
        phases: bool = True,
        files: tuple[tuple[str, tuple[bytes, float]], ...] = (),
        ratio: float = 1.0,
        min_free: int = 0,
    ) -> None:
        self.cap, self.metadata, self.phases = cap, metadata, phases
        self.ratio, self.min_free = ratio, min_free  # V3's watermark and floor (the oracle's --settings)
        self.clock = FakeClock(1000.0)  # frozen: beliefs never expire (TTL -1 anyway)
        # ``files``: on disk, neither tracked nor believed
        self.initial: tuple[State, Cursors] = ((files, (), (), (), (), ()), ())

    def prepare(self, history: Sequence[Operation]) -> list[Operation]:
        """The history in the operations this spec steps (batches by key; ``set`` and ``get`` in steps
        with ``phases``)."""
        return spelled_out(history, self.phases)

    def _model(self, state: State) -> FileStoreModel:
        files, lru, believed, writers, published, _pending = state
        model = FileStoreModel(
            namespace="_ns",
            cap=self.cap,
            ratio=self.ratio,
            min_free=self.min_free,
            disk_size=1 << 50,
            metadata=self.metadata,
            ttl=-1,
            temp_max_age=3600.0,
            clock=self.clock,
        )
        model.files, model.lru = dict(files), list(lru)
        model.beliefs = dict.fromkeys(believed, 1000.0)
        model.writers, model.published = dict(writers), set(published)
        return model

    @staticmethod
    def _state(model: FileStoreModel, pending: Pending) -> State:
        return (
            tuple(sorted(model.files.items())),
            tuple(model.lru),
            tuple(sorted(str(k) for k in model.beliefs)),
            tuple(sorted(model.writers.items())),
            tuple(sorted(model.published)),
            pending,
        )

    @staticmethod
    def _refresh(model: FileStoreModel, key: str) -> None:
        """The end of a probe that found the file: recency and belief, if the file is still there.

        A removal between the probe and its end took the file away: a key still
        tracked (written again meanwhile) is only refreshed.
        """
        file = model.files.get(model.name(key))
        if file is not None:
            model.touch(key, len(file[0]))
            model.teach(key)
        elif any(entry[0] == key for entry in model.lru):
            model.touch(key)

    def step(
        self, state: tuple[State, Cursors], name: str, args: tuple[Hashable, ...]
    ) -> tuple[tuple[State, Cursors], Any]:
        outcomes = self.outcomes(state, name, args)
        if not outcomes:
            raise ValueError(f"{name}{args} has no outcome in this state")
        return outcomes[0]

    def outcomes(
        self, state: tuple[State, Cursors], name: str, args: tuple[Hashable, ...]
    ) -> list[tuple[tuple[State, Cursors], Any]]:
        """The one outcome of the operation, or none: a later step of a call whose earlier one is not in,
        or a batch's step before the one its :class:`Slot` follows (the state's cursors say how many
        steps of each batch under way were taken)."""
        model_state, cursors = state
        slot = args[-1] if args and isinstance(args[-1], Slot) else None
        if slot is None:
            return [((after, cursors), answer) for after, answer in self._outcomes(model_state, name, args)]
        taken = dict(((thread, chain), n) for thread, chain, n in cursors)
        mine = (slot.thread, slot.chain)
        if taken.get(mine, 0) != slot.position:
            return []
        if slot.last:
            taken.pop(mine, None)
        else:
            taken[mine] = slot.position + 1
        moved = tuple(sorted(((t, c, n) for (t, c), n in taken.items()), key=repr))
        return [((after, moved), answer) for after, answer in self._outcomes(model_state, name, args[:-1])]

    def _outcomes(self, state: State, name: str, args: tuple[Hashable, ...]) -> list[tuple[State, Any]]:
        model, pending = self._model(state), state[-1]
        if name == "scan":  # F8-bg: a batch of a background scan, uncapped: no answer changes (above)
            return [(state, None)]
        if name in ("set", "get", "exists", "delete", "clear"):
            answer = getattr(model, name)(*args)
            return [(self._state(model, pending), answer)]
        if name == "get_into":  # strict: one instant
            return [(self._state(model, pending), model.get(*args))]  # type: ignore[arg-type]
        if name in BATCHES:
            return []  # its answer does not fit its keys (spelled_out left it whole)
        if name == "set_begin":
            thread, key, value = args
            assert isinstance(thread, int) and isinstance(key, str) and isinstance(value, bytes)
            present = model.name(key) in model.files
            found = [(self._state(model, tuple(sorted((*pending, (thread, key, "found"))))), None)]
            if model.believed(key):
                # Or "found" (finding 5): an eviction under way drops the belief before it unlinks the
                # file (V6), so a set that looks in between probes the file, finds it and refreshes at its
                # end; the eviction, which chose its victims without that refresh, may then remove it.
                model.touch(key)
                begun = "done"
            elif present:
                return found  # refreshed at its end, as a read is
            else:
                model.missing(key)
                begun = "writing" if model.reserve(key, len(value)) else "refused"
            also = found if present and begun == "done" else []
            return [(self._state(model, tuple(sorted((*pending, (thread, key, begun))))), None), *also]
        if name == "get_read":
            thread, key, *size = args  # get_into's: the buffer's size
            assert isinstance(thread, int) and isinstance(key, str)
            file = model.files.get(model.name(key))
            if file is None:
                model.missing(key)
                return [(self._state(model, tuple(sorted((*pending, (thread, key, "miss"))))), None)]
            if size and size[0] != len(file[0]):  # get_into: a file of another size is not read (F4)
                return [(self._state(model, tuple(sorted((*pending, (thread, key, "unread"))))), None)]
            return [(self._state(model, tuple(sorted((*pending, (thread, key, "hit"))))), file[0])]
        if name == "get_end":
            thread, key = args
            assert isinstance(thread, int) and isinstance(key, str)
            mode, left = _opened(pending, thread, key)
            if mode is None:
                return []
            if mode == "hit":
                self._refresh(model, key)
            return [(self._state(model, left), None)]
        if name in ("set_publish", "set_end"):
            thread, key, value = args
            assert isinstance(thread, int) and isinstance(key, str) and isinstance(value, bytes)
            mode, left = _opened(pending, thread, key)
            if mode is None:
                return []
            if name == "set_publish":
                if mode not in PUBLISHED:
                    return []  # published already
                if mode == "writing":
                    model.files[model.name(key)] = (value, self.clock())
                return [(self._state(model, tuple(sorted((*left, (thread, key, PUBLISHED[mode]))))), None)]
            if mode in PUBLISHED:
                return []  # its publish step comes first
            if mode == "found, published":
                self._refresh(model, key)
            elif mode == "published" and model.name(key) in model.files:
                model.commit(key)
                model.teach(key)
            elif mode == "published":  # a removal overlapped: the file went before the commit
                model.abort(key)
            return [(self._state(model, left), mode != "refused, published")]
        raise ValueError(f"unknown operation {name!r}")


def _opened(pending: Pending, thread: int, key: str) -> tuple[str | None, Pending]:
    """The mode of ``thread``'s open call on ``key`` (None: none is open) and the other open calls."""
    mode = next((p[2] for p in pending if p[:2] == (thread, key)), None)
    return mode, tuple(p for p in pending if p[:2] != (thread, key))


def check_file_store_history(
    history: Sequence[Operation], spec: FileStoreHistorySpec, max_steps: int = MAX_STEPS
) -> Verdict:
    """:func:`check_history` of ``history`` as ``spec`` steps it (``set``/``get`` in steps, unless strict:
    the check applies the spec's ``prepare``)."""
    return check_history(history, spec, max_steps)


class _RecencyAtReservationEvictor(LRUFileEvictor):
    """The evictor with finding 2 put back: a commit leaves the entry where its reservation put it."""

    def commit(self, key: str, size: int | None = None) -> None:
        with self._lock:
            order = list(self._entries)
            super().commit(key, size)
            if key in order:  # undo the move to the most recently used end
                for later in order[order.index(key) + 1 :]:
                    if later in self._entries:
                        self._entries.move_to_end(later)


class RecencyAtReservationStore(HiCacheFile):
    """A deliberately racy store (the checker must catch it): recency counts from a write's reservation,
    not its publication.  Sequentially the two coincide, so only concurrent histories show it."""

    evictor_class = _RecencyAtReservationEvictor


# (threshold of the roll, operation): sets, gets, exists and a few deletes
_CALLS = ((0.4, "set"), (0.65, "get"), (0.9, "exists"), (1.0, "delete"))


def store_call(name: str) -> Callable[[random.Random, Hashable], Call]:
    """How a script's call of ``name`` on a key is made: a ``set`` with the key's own value (VALUE_OF)."""
    if name == "set":
        return lambda r, key: ("set", (key, VALUE_OF[str(key)]))
    return lambda r, key: (name, (key,))


def file_store_scripts(rng: random.Random, threads: int, length: int) -> list[Script]:
    """One script per thread: sets, gets, exists and a few deletes over 3 content-addressed keys."""
    picks = [Pick(below(bound), store_call(name)) for bound, name in _CALLS]
    return weighted_scripts(rng, threads, length, picks, KEYS)


def check_file_store_histories(
    factory: Callable[..., Any] = HiCacheFile,
    *,
    histories: int,
    seed: int = 0,
    threads: int = 3,
    length: int = 12,
    cap: int = CAP,
    phases: bool = True,
    max_steps: int = MAX_STEPS,
    meet_every: int | None = MEET_EVERY,
) -> RunSummary:
    """Record ``histories`` real-thread runs on fresh stores and check each one against the model.

    ``meet_every`` as in :func:`~spec.linearizability.metadata_cache.check_real_thread_histories`:
    the threads meet at every ``meet_every``-th call, so calls overlap by construction.
    """
    rng = random.Random(seed)
    config = {"max_size": cap, "eviction_ratio": 1.0, "enable_metadata_cache": True, "metadata_ttl": -1}

    def store() -> Any:
        clock = FakeClock(1000.0)
        return factory(DIRECTORY, namespace="_ns", extra_config=config, fs=FakeFileSystem(clock), clock=clock)

    return record_histories(
        store,
        lambda: file_store_scripts(rng, threads, length),
        FileStoreHistorySpec(cap, phases=phases),
        histories=histories,
        max_steps=max_steps,
        meet_every=meet_every,
    )


class _Scanning:
    """F8-bg: a store scanning in the background whose scan one recorded thread steps: ``scan()`` is one
    batch (the loop of the scan's own thread, ``_scan_step``), answering None."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def scan(self) -> None:
        self._store._scan_step()


def _found_at_start(factory: Callable[..., Any]) -> _Scanning:
    """A store scanning in the background (a batch a step, no thread of its own) on a directory where
    another store left the three pages; beliefs on, no cap."""

    class Stepped(factory):  # type: ignore[valid-type,misc]
        _scan_thread = False
        _scan_batch = 1

    clock = FakeClock(1000.0)
    fs = FakeFileSystem(clock)
    fs.mkdir(DIRECTORY)
    for key, value in VALUE_OF.items():
        fs.put(f"{DIRECTORY}/{key}_ns.bin", value, mtime=900.0)
    config = {"enable_metadata_cache": True, "metadata_ttl": -1, "startup_scan": "background"}
    return _Scanning(Stepped(DIRECTORY, namespace="_ns", extra_config=config, fs=fs, clock=clock))


FOUND = tuple((f"{key}_ns.bin", (value, 900.0)) for key, value in sorted(VALUE_OF.items()))


def check_background_scan_histories(
    factory: Callable[..., Any] = HiCacheFile,
    *,
    histories: int,
    seed: int = 0,
    threads: int = 2,
    length: int = 12,
    max_steps: int = MAX_STEPS,
    meet_every: int | None = MEET_EVERY,
) -> RunSummary:
    """F8-bg: ``histories`` real-thread runs of ``threads`` clients and one scanning thread (a ``scan``
    per call, one listing node each) on fresh stores whose directory holds the three pages, every
    ``meet_every``-th call a meeting of all of them (so scan steps overlap calls by construction), each
    history checked against the model."""
    rng = random.Random(seed)

    def scripts() -> list[Script]:
        return [*file_store_scripts(rng, threads, length), [("scan", ())] * length]

    return record_histories(
        lambda: _found_at_start(factory),
        scripts,
        FileStoreHistorySpec(0, phases=False, files=FOUND),
        histories=histories,
        max_steps=max_steps,
        meet_every=meet_every,
    )


def forced_scan_history(factory: Callable[..., Any]) -> list[Operation]:
    """F8-bg: thread 0 deletes ``c`` while the scan (thread 1) has read its listing but not reached ``c``;
    the scan goes to its end; thread 0 asks whether ``c`` exists (answered by a belief if it has one)."""
    store, recorder = _found_at_start(factory), HistoryRecorder()
    recorder.perform(1, store, "scan")
    recorder.perform(0, store, "delete", "c")
    for _ in VALUE_OF:
        recorder.perform(1, store, "scan")
    recorder.perform(0, store, "exists", "c")
    return list(recorder.operations)


def _held_at_write(factory: Callable[..., Any]) -> tuple[Any, threading.Event, threading.Event]:
    """A capped store whose ``held-writer`` thread's ``set`` stops at its temp-file write (reserved)."""
    reserved, resume = threading.Event(), threading.Event()
    clock = FakeClock(1000.0)
    fs = FakeFileSystem(clock)

    def hold(op: str, path: str) -> None:
        if op == "write" and threading.current_thread().name == "held-writer":
            reserved.set()
            assert resume.wait(timeout=SAFETY_TIMEOUT), "the main thread never resumed the held write"

    def hold_after_read(op: str, path: str) -> None:
        if op == "read" and threading.current_thread().name == "held-reader":
            reserved.set()
            assert resume.wait(timeout=SAFETY_TIMEOUT), "the main thread never resumed the held read"

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
    assert reserved.wait(timeout=SAFETY_TIMEOUT), "thread 0 never reached its held step"
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


def forced_found_mid_eviction(factory: Callable[..., Any]) -> list[Operation]:
    """Finding 5, forced with the fake filesystem's hooks: a ``set`` of a present key that looks while an
    eviction is between dropping the key's belief and unlinking its file.

    Thread 0 writes ``a`` then ``b`` (6 bytes, the cap).  Thread 1's ``set('c')``
    must evict both; it is held at the unlink of ``a``, after ``on_evict`` dropped
    ``a``'s belief (V6: the belief goes first).  Thread 0's ``set('a')`` then finds
    no belief, stats the file (still there) and answers True without writing; the
    eviction goes on and removes ``a``; thread 0's ``get('a')`` is None.  No order
    of atomic calls gives that (a ``set`` of a present key refreshes it, so the
    eviction would take ``b`` only); the spec in steps explains it as a ``set``
    that found the file and refreshes at its end, after the eviction.
    """
    clock = FakeClock(1000.0)
    fs = FakeFileSystem(clock)
    config = {"max_size": CAP, "eviction_ratio": 1.0, "enable_metadata_cache": True, "metadata_ttl": -1}
    store = factory(DIRECTORY, namespace="_ns", extra_config=config, fs=fs, clock=clock)
    recorder = HistoryRecorder()
    recorder.perform(0, store, "set", "a", VALUE_OF["a"])
    recorder.perform(0, store, "set", "b", VALUE_OF["b"])
    evicting, probed = threading.Event(), threading.Event()
    victim = store.file_path("a")

    def hold_the_unlink(op: str, path: str) -> None:
        if op == "unlink" and path == victim and threading.current_thread().name == "evicting-writer":
            evicting.set()
            assert probed.wait(timeout=SAFETY_TIMEOUT), "the main thread never probed the victim"

    def note_the_probe(op: str, path: str) -> None:
        if op == "stat" and path == victim and threading.current_thread() is threading.main_thread():
            probed.set()  # thread 0's set saw the file; it now waits for the lock the eviction holds

    fs.before, fs.after = hold_the_unlink, note_the_probe
    worker = threading.Thread(
        target=recorder.perform, args=(1, store, "set", "c", VALUE_OF["c"]), name="evicting-writer"
    )
    worker.start()
    assert evicting.wait(timeout=SAFETY_TIMEOUT), "thread 1 never reached the unlink of its victim"
    recorder.perform(0, store, "set", "a", VALUE_OF["a"])
    worker.join()
    fs.before = fs.after = None
    recorder.perform(0, store, "get", "a")
    return list(recorder.operations)
