"""Lock-step machine for the file store (F1-F8, V1-V6, C1-C4, B1, B2, S3) against ``spec.models.file_store``.

A subclass names the implementation: ``target(storage_dir, namespace=..., extra_config=..., fs=...,
clock=...)`` (``HiCacheFile``'s signature).  The implementation runs on a
:class:`spec.world.filesystem.FakeFileSystem`; the model keeps its own copy of the
directory.  Both see the same world: other processes creating and deleting
files (of this namespace and another one, and temp files), faults (ENOSPC/EIO
on write, EIO on rename and read, short reads, unremovable files with
EPERM/EBUSY/EISDIR), nodes another user plants under a key's name (a
symlink, a FIFO, a directory, a file of another owner: S3), a fake clock,
restarts and crashes in the middle of a ``set`` (then a new store on the same
directory).  Two rules put the next victim in a known plight in the same step
as the burst of writes that evicts past it (its file vanished: V6; it cannot be
removed: V5, S7), so that reaching those cases does not hang on the search
drawing three unrelated steps in one order (a derandomized search still moves
with what the process imported before it: Hypothesis draws some integers from
the constants of the project's loaded modules).

Checked after every step: the directory (names, bytes, mtimes) equals the
model's; C3 (the evictor's total is the sum of its sizes and its entries are
the model's, when the implementation offers ``evictor.snapshot()``); beliefs
(of a HiCacheFile, see :func:`believed`).  Checked as properties in the rules: C1 (a
key this store removed is never reported to exist until set again), C2 (a
``True`` for a file that is gone comes from a live belief), C4 (after a crash:
whole values only, acknowledged values intact unless evicted, stale temp files
removed at start-up), F6 (a believed ``exists`` makes no filesystem call, an
unbelieved one exactly one) and F5 (``batch_exists`` never lists the directory).

The one declared choice (O3, ``choices``): ``eviction`` ``inline`` (V3: a write evicts, the default) or
``background`` (V3-bg: a write never evicts, start-up runs no pass, and the store's ``evict()``, one pass
of its background evictor, runs as a step: after each burst of writes, ``write_every_key``, and each time
the clock moves, ``advance``; no rule of its own, so an inline store draws the same examples as before).

:class:`BackgroundScanMachine` (F8-bg) builds the stores with ``startup_scan="background"`` and runs their
scan as a rule of its own, ``scan_step``, interleaved with every other: the store is built without the
scan's thread, reading ``SCAN_BATCH`` nodes a step (a subclass of the target, ``stepped``), and the model
reads the same batches of the same listing.
"""

from __future__ import annotations

import copy
import errno
from collections.abc import Callable, Hashable, Mapping
from functools import partial
from typing import Any, ClassVar, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from ..models.file_names import is_temp
from ..models.file_store import FileStoreModel
from ..models.refusals import refuse_bad_call
from ..world.filesystem import Crash
from ._base import BadInput, BadSetting, FileWorldMachine, try_bad_inputs

__all__ = [
    "BAD_INPUTS",
    "BAD_SETTINGS",
    "DIRECTORY",
    "KEYS",
    "NAMESPACE",
    "SCAN_BATCH",
    "BackgroundScanMachine",
    "FileStoreMachine",
    "believed",
    "stepped",
]

T = TypeVar("T")  # what a call the machine crashes inside answers

DIRECTORY = "/cache"
NAMESPACE = "_ns"
OTHER_USER = 2000  # S3: the neighbour who plants files
FOREIGN = "_x_ns"  # another namespace, ending like ours: its names end in "_ns.bin" too (F1)
KEYS = ("a", "b", "c", "d", "e_x")  # "e_x" is escaped in file names: "e%5Fx_ns.bin"
TEMP_MAX_AGE = 10.0
DELTAS = (0.5, 1.0, 2.5, 11.0)
SCAN_BATCH = 2  # F8-bg: listing nodes per scan step (the machine's directories hold about ten)
# The store's settings each example draws (``build``).
CAPS, RATIOS = st.sampled_from((0, 6, 10, 16)), st.sampled_from((1.0, 0.75, 0.5))
FLOORS, DISKS = st.sampled_from((0, 0, 6)), st.sampled_from((1 << 20, 40, 24))
TTLS = st.sampled_from((-1, 0, 2.0, 30.0))

keys = st.sampled_from(KEYS)
# Distinct contents (no value is half of another), sizes that make a small cap overflow.
VALUES = (b"", b"Q", b"xy", b"abc", b"12345", b"qwerty", b"ZZZZZZ")
values = st.sampled_from(VALUES)

# B1: every bad input F's clauses name, on every method that takes it: a key that is no str, empty, with a
# separator or NUL, starting with ".", not encodable (a lone surrogate, S5) or too long for a file name
# (F2); a value that is not bytes-like; a buffer that is not a writable, contiguous bytes-like object;
# a batch's keys or values that are not iterable, a bad key after a good one, a bad value, one value too
# few (F5).  Which error each is, and the parameter its message names, the spec says (``refuse_bad_call``).
_LONG, _LONG_TEXT = "k" * 300, "'k' * 300"
_BAD_KEYS = (5, None, b"a", "", "a/b", "a\0b", ".a", "\udcff", _LONG)
_SINGLE: dict[str, tuple[object, ...]] = {
    "set": (b"v",),
    "get": (),
    "get_into": (bytearray(1),),
    "exists": (),
    "delete": (),
}
_BUFFERS = {
    "5": 5,
    "'abc'": "abc",
    "b'abc' (read-only)": b"abc",
    "memoryview(bytearray(6))[::2] (not contiguous)": memoryview(bytearray(6))[::2],
}
BAD_INPUTS: tuple[BadInput, ...] = (
    *(
        BadInput(f"{method} key={_LONG_TEXT if key == _LONG else repr(key)}", method, (key, *rest), at=0)
        for method, rest in _SINGLE.items()
        for key in _BAD_KEYS
    ),
    *(BadInput(f"set value={value!r}", "set", ("a", value)) for value in ("v", 5, None)),
    *(BadInput(f"get_into buffer={label}", "get_into", ("a", buffer)) for label, buffer in _BUFFERS.items()),
    BadInput("batch_set keys=5", "batch_set", (5, [b"v"]), at=0),
    BadInput("batch_set values=5", "batch_set", (["a"], 5)),
    BadInput("batch_set values=[b'v', 'w'] (a str value)", "batch_set", (["a", "b"], [b"v", "w"])),
    BadInput("batch_set values=[b'v'] (one value for two keys)", "batch_set", (["a", "b"], [b"v"])),
    BadInput("batch_set keys=['a', '']", "batch_set", (["a", ""], [b"v", b"w"]), at=0),
    BadInput("batch_set keys=['a', 5]", "batch_set", (["a", 5], [b"v", b"w"]), at=0),
    *(
        BadInput(f"{method} keys={label}", method, (batch,))
        for method in ("batch_get", "batch_exists")
        for label, batch in (("5", 5), ("['a', '']", ["a", ""]), ("['a', 5]", ["a", 5]))
    ),
)
# B1 of the constructor (F1, F9, S1), tried by the oracle through the target's constructor form: a
# storage_dir and a namespace of the wrong type or value, an extra_config that is no mapping or names an
# unknown setting, and every setting of the wrong type or out of its range or grammar (the spec's
# ``refuse_bad_settings`` says which error each is).
_NAN, _INF = float("nan"), float("inf")
_BAD_CONFIG: dict[str, tuple[object, ...]] = {
    "max_size": (-1, 2**63, 1.5, True, "12Q", "1.5", None),
    "min_free_space": (-1, "x", 1.5),
    "max_value_size": (-1, "1.5"),
    "eviction_ratio": (0, -0.1, 1.5, _NAN, _INF, "x", "", True, None),
    "enable_metadata_cache": ("maybe", "", 1, None),
    "metadata_ttl": (-2, -0.5, _NAN, _INF, "x", True),
    "temp_max_age": (-1, _NAN, _INF, "x", True),
    "metadata_eviction": ("fifo", 1),
    "layout": ("tree", 1),
    "storage_dir": ("", "a\0b", 5),
    "shared_group": ("", -1, True, 1.5),
}
BAD_SETTINGS: tuple[BadSetting, ...] = (
    *(BadSetting(f"storage_dir={value!r}", {"storage_dir": value}) for value in (5, "", "/a\0b")),
    *(
        BadSetting(f"namespace={value!r}", {"namespace": value})
        for value in (5, "r0", "_a/b", "_a\0b", "_\udcff")
    ),
    *(
        BadSetting(f"extra_config={value!r}", {"extra_config": value})
        for value in (5, {1: 0}, {"no_such_setting": 1}, {"HICACHE_FILE_MAX_SIZE": "1G"})
    ),
    *(
        BadSetting(f"extra_config={{{name!r}: {value!r}}}", {"extra_config": {name: value}})
        for name, bad in _BAD_CONFIG.items()
        for value in bad
    ),
)


def believed(store: Any) -> frozenset[Hashable]:
    """The keys a HiCacheFile (or a subclass) believes, read through its side-effect-free ``snapshot()``;
    empty when beliefs are off.  O(beliefs).

    A guest's look that changes nothing (``contains`` would make the key the most recent under
    ``"lru"``)."""
    return frozenset(k for k, _ in store.snapshot())


_STEPPED: dict[type, type] = {}


def stepped(target: Any) -> Any:
    """F8-bg: ``target`` built without its scan's thread, reading ``SCAN_BATCH`` nodes a ``_scan_step``: a
    subclass with ``_scan_thread = False`` and ``_scan_batch = SCAN_BATCH`` (HiCacheFile's test hook), when
    ``target`` is a class that has them; else ``target`` itself."""
    if not (isinstance(target, type) and hasattr(target, "_scan_thread")):
        return target
    if target not in _STEPPED:
        hook = {"_scan_thread": False, "_scan_batch": SCAN_BATCH, "__module__": target.__module__}
        _STEPPED[target] = type(target.__name__, (target,), hook)
    return _STEPPED[target]


class FileStoreMachine(FileWorldMachine):
    """Checks ``target``'s stores against the model.  A subclass with ``layout = "fanout"`` (F1-fanout) builds
    the stores with that setting, and the world's files lie in the subdirectories."""

    layout: ClassVar[str] = "flat"
    startup_scan: ClassVar[str] = "blocking"  # F8; BackgroundScanMachine: "background" (F8-bg)
    # O12: the engine's form names its pages ``<key>_<model>_<tp_rank>_<tp_size>.bin``, so the oracle runs
    # it with namespaces of that shape (ours and F1's foreign one) and with ``batch_set`` answering one bool
    # for the batch, as the engine's does (the writes after the first refused one are not made).
    namespace: ClassVar[str] = NAMESPACE
    foreign: ClassVar[str] = FOREIGN
    one_bool_batches: ClassVar[bool] = False
    # --settings: the store's configuration pinned (extra_config's names: max_size, eviction_ratio,
    # min_free_space, enable_metadata_cache, metadata_ttl); ``build`` still draws its own, so that examples
    # and their shrinking are those of an unpinned run, and these values override the drawn ones.
    pinned: ClassVar[Mapping[str, Any] | None] = None

    choices: ClassVar = {"eviction": "inline"}

    def __init__(self) -> None:
        super().__init__(1000.0)
        self.removed_by_store: set[str] = set()  # C1: removed by this store, not set since
        self.temp_serial = 0
        self.clause = "F8"  # the clause of the step under way: what a difference found after it breaks
        self.evicted_at_step = 0  # the model's victims before the step (V3: the step evicted)
        self.world_changes = 0  # the steps in which another process changed this namespace's nodes
        self.bad_inputs_tried = False  # B1: the bad inputs are tried once an example

    @initialize(cap=CAPS, ratio=RATIOS, min_free=FLOORS, disk_size=DISKS, metadata=st.booleans(), ttl=TTLS)
    def build(
        self, cap: int, ratio: float, min_free: int, disk_size: int, metadata: bool, ttl: float
    ) -> None:
        if self.pinned is not None:  # --settings: the configuration a user runs, whatever was drawn
            cap, ratio = self.pinned["max_size"], self.pinned["eviction_ratio"]
            min_free, metadata = self.pinned["min_free_space"], self.pinned["enable_metadata_cache"]
            ttl = self.pinned["metadata_ttl"]
        self.extra_config: dict[str, object] = {
            "max_size": cap,
            "eviction_ratio": ratio,
            "min_free_space": min_free,
            "enable_metadata_cache": metadata,
            "metadata_ttl": ttl,
            "temp_max_age": TEMP_MAX_AGE,
        }
        if self.layout != "flat":
            self.extra_config["layout"] = self.layout
        if self.startup_scan != "blocking":
            self.extra_config["startup_scan"] = self.startup_scan
        self.model = self.new_model(
            DIRECTORY,
            namespace=self.namespace,
            cap=cap,
            ratio=ratio,
            min_free=min_free,
            disk_size=disk_size,
            metadata=metadata,
            ttl=ttl,
            temp_max_age=TEMP_MAX_AGE,
            background=self.background,
            layout=self.layout,
            startup_scan=self.startup_scan,
            scan_batch=SCAN_BATCH,
        )
        self.impl = self._new_store()
        self.model.restart()
        self.ready = True

    @property
    def background(self) -> bool:
        """V3-bg declared: the writes do not evict, the store's passes (``evict()``) do."""
        return self.choices["eviction"] == "background"

    def _pass(self) -> None:
        """V3-bg: one pass of the store's background evictor (inline: nothing)."""
        if not self.background:
            return
        self._step("V3-bg")
        got, want = self.impl.evict(), self.model.evict()
        assert got is None or bool(got) == want, f"V3-bg: evict() -> {got}, model {want}"
        assert self.model.drained(), f"V3-bg (the model): a pass left {self.model.lru} over the watermarks"
        self._note_evictions()

    def _new_store(self) -> Any:
        target = stepped(self.target) if self.startup_scan == "background" else self.target
        return target(
            DIRECTORY, namespace=self.namespace, extra_config=self.extra_config, fs=self.fs, clock=self.clock
        )

    @property
    def _tree(self) -> bool:
        """F1-fanout: the world's files are listed through the subdirectories."""
        return self.layout == "fanout"

    def _put(self, name: str) -> str:
        """The path of ``name`` (relative to the directory), its subdirectories made first as another
        process of this user makes them (F1-fanout)."""
        where = name.rpartition("/")[0]
        if where:
            level1 = f"{DIRECTORY}/{where.partition('/')[0]}"
            for directory in (level1, f"{DIRECTORY}/{where}"):
                if directory not in self.fs.dirs:
                    self.fs.make_dir(directory)
        return f"{DIRECTORY}/{name}"

    def _step(self, clause: str) -> None:
        self.clause = clause
        self.evicted_at_step = len(self.victims)

    def _answer_clause(self, got: object, want: object, clause: str) -> str:
        """A write refused that the model admits, with an unremovable file around: eviction wedged
        (V5; under V3-bg a write does not evict, so such a refusal is V3-bg's); else ``clause``."""
        refused = got is False or (isinstance(got, list) and False in got)
        admitted = want is True or (
            isinstance(want, list) and isinstance(got, list) and want.count(True) > got.count(True)
        )
        if refused and admitted and self.fs.faults.unremovable:
            return "V3-bg" if self.background else "V5"
        return clause

    def _note_evictions(self) -> None:
        """C1 bookkeeping: victims this store removed in the step under way."""
        for key in self.victims[self.evicted_at_step :]:
            if not self.fs.faults.stuck(f"{DIRECTORY}/{self.model.name(key)}"):
                self.removed_by_store.add(key)

    # -- the public operations --------------------------------------------

    @rule(key=keys, value=values)
    def set(self, key: str, value: bytes) -> None:
        """F3, V3-V6, B2."""
        self._step("F3")
        quiet = self.model.believed(key) and any(e[0] == key for e in self.model.lru)
        calls = sum(self.fs.calls.values())
        got = self.impl.set(key, value)
        calls = sum(self.fs.calls.values()) - calls
        want = self.model.set(key, value)
        assert got == want, (
            f"{self._answer_clause(got, want, 'F3')}: set({key!r}, {value!r}) -> {got}, model {want}"
        )
        if quiet:
            assert calls == 0, f"F6/F3: set of believed {key!r} made {calls} filesystem calls"
        self._note_evictions()
        if want:
            self.removed_by_store.discard(key)

    @rule(pairs=st.lists(st.tuples(keys, values), max_size=3))
    def batch_set(self, pairs: list[tuple[str, bytes]]) -> None:
        """F5."""
        self._step("F5")
        got = self.impl.batch_set([k for k, _ in pairs], [v for _, v in pairs])
        each: list[bool] = []
        for k, v in pairs:  # O12, the engine's form: it stops at the first write refused
            each.append(self.model.set(k, v))
            if self.one_bool_batches and not each[-1]:
                break
        want: Any = all(each) if self.one_bool_batches else each
        assert got == want, (
            f"{self._answer_clause(got, want, 'F5')}: batch_set({pairs!r}) -> {got}, model {want}"
        )
        self._note_evictions()
        self.removed_by_store -= {k for (k, _), ok in zip(pairs, each, strict=False) if ok}

    @rule(value=st.sampled_from(VALUES[3:]))
    def write_every_key(self, value: bytes) -> None:
        """V3, V6: a burst of writes that overflows a small cap (victims include vanished files); V3-bg:
        then the background evictor's pass."""
        self.batch_set([(key, value) for key in KEYS])
        self._pass()

    @rule(key=keys)
    def get(self, key: str) -> None:
        """F4, B2."""
        self._step("F4")
        got = self.impl.get(key)
        want = self.model.get(key)
        assert got == want, f"F4: get({key!r}) -> {got!r}, model {want!r}"

    @rule(key=keys, delta=st.sampled_from((0, 0, 1, -1)))
    def get_into(self, key: str, delta: int) -> None:
        """F4: exact size only."""
        self._step("F4")
        file = self.model.files.get(self.model.name(key))
        size = max((len(file[0]) if file is not None else 3) + delta, 0)
        buffer = bytearray(b"\xee" * size)
        got = self.impl.get_into(key, buffer)
        want = self.model.get(key, buffer_size=size)
        assert got == (want is not None), f"F4: get_into({key!r}, {size}) -> {got}, model {want!r}"
        if want is not None:
            assert bytes(buffer) == want, f"F4: get_into({key!r}) filled {bytes(buffer)!r}, want {want!r}"

    @rule(batch=st.lists(keys, max_size=4))
    def batch_get(self, batch: list[str]) -> None:
        """F5."""
        self._step("F5")
        got = self.impl.batch_get(batch)
        want = [self.model.get(k) for k in batch]
        assert got == want, f"F5: batch_get({batch!r}) -> {got!r}, model {want!r}"

    @rule(key=keys)
    def exists(self, key: str) -> None:
        """F6 (no filesystem call on a live belief), C1, C2."""
        self._step("F6")
        believed = self.model.believed(key)
        calls = sum(self.fs.calls.values())
        got = self.impl.exists(key)
        calls = sum(self.fs.calls.values()) - calls
        want = self.model.exists(key)
        assert got == want, f"F6: exists({key!r}) -> {got}, model {want}"
        assert calls == (0 if believed else 1), f"F6: exists({key!r}) made {calls} filesystem calls"
        if key in self.removed_by_store:
            assert not got, f"C1: exists({key!r}) after this store removed it"
        if got and self.model.name(key) not in self.model.files:
            assert believed, f"C2: exists({key!r}) is True for a gone file without a live belief"

    @rule(batch=st.lists(keys, max_size=4))
    def batch_exists(self, batch: list[str]) -> None:
        """F5: the longest existing prefix; at most one call per key asked, never a listing."""
        self._step("F5")
        scans, calls = self.fs.calls["scandir"], sum(self.fs.calls.values())
        got = self.impl.batch_exists(batch)
        unbelieved, taught = 0, set()  # the stat calls F6 allows: one per unbelieved key walked
        for k in batch:
            if self.model.believed(k) or k in taught:
                continue
            unbelieved += 1
            if self.model.name(k) not in self.model.files:
                break
            if self.model.metadata:
                taught.add(k)
        want = self.model.batch_exists(batch)
        assert got == want, f"F5: batch_exists({batch!r}) -> {got}, model {want}"
        assert self.fs.calls["scandir"] == scans, "F5: batch_exists listed the directory"
        calls = sum(self.fs.calls.values()) - calls
        assert calls == unbelieved, f"F5/F6: {calls} calls for {unbelieved} unbelieved keys asked"

    @rule(key=keys)
    def delete(self, key: str) -> None:
        """F7."""
        self._step("F7")
        got = self.impl.delete(key)
        want = self.model.delete(key)
        assert got == want, f"F7: delete({key!r}) -> {got}, model {want}"
        if want:
            self.removed_by_store.add(key)

    @rule()
    def clear(self) -> None:
        """F7: only this namespace's files go (the foreign ones are compared every step)."""
        self._step("F7")
        ours = {self.model.key_of(n) for n in self.model.files} - {None}
        got = self.impl.clear()
        want = self.model.clear()
        assert got == want, f"F7: clear() -> {got}, model {want}"
        self.removed_by_store |= {
            k for k in ours if k is not None and self.model.name(k) not in self.model.files
        }

    @precondition(lambda self: not self.bad_inputs_tried)
    @rule()
    def bad_input(self) -> None:
        """B1: every bad input of ``BAD_INPUTS`` raises the error the spec raises for it, naming the
        parameter, before any filesystem call (F2, F5: a batch checks every argument first), and changes
        nothing (the directory, the entries and the beliefs are compared after the step).  The labels
        tried go to the report."""
        self._step("B1")
        self.bad_inputs_tried = True  # once an example: the other rules keep their share of the steps
        if self.skip_bad_inputs:
            return  # shrinking another clause's failure: the same step, without the calls (see _base)
        spec = partial(refuse_bad_call, namespace=self.namespace)
        try_bad_inputs(self._seen, self.impl, BAD_INPUTS, spec, after=self._no_io())

    def _no_io(self) -> Callable[[str], None]:
        """F2: after each bad input, no filesystem call was made since the one before."""
        calls = [sum(self.fs.calls.values())]

        def after(label: str) -> None:
            made = sum(self.fs.calls.values()) - calls[0]
            assert not made, f"B1: {label} made {made} filesystem calls before its refusal (F2, F5)"
            calls[0] += made

        return after

    # -- the world --------------------------------------------------------

    @rule(index=st.integers(0, 9))
    def another_process_deletes(self, index: int) -> None:
        """C2, F4: one of this namespace's files is deleted behind the store's back."""
        self._step("C2")
        ours = sorted(n for n in self.model.files if self.model.key_of(n) is not None)
        if ours:
            name = ours[index % len(ours)]
            self.fs.remove(f"{DIRECTORY}/{name}")
            del self.model.files[name]
            self.world_changes += 1

    @rule(index=st.integers(0, 9), op=st.sampled_from(("get", "exists", "set", "get_into", "delete")))
    def revisit_a_vanished_file(self, index: int, op: str) -> None:
        """F4, C2, V4: a key the store tracks or believes, whose file another process deleted."""
        tracked = {e[0] for e in self.model.lru} | {k for k in KEYS if self.model.believed(k)}
        gone = sorted(k for k in tracked if self.model.name(k) not in self.model.files)
        if not gone:
            return
        key = gone[index % len(gone)]
        if op == "delete" and not hasattr(self.impl, "delete"):  # O12: the engine's form has none
            return
        if getattr(type(self), op, None) is None:  # O2: the oracle set that rule's group aside
            return
        if op == "set":
            self.set(key, VALUES[index % len(VALUES)])
        elif op == "get_into":
            self.get_into(key, 0)
        else:
            getattr(self, op)(key)

    @rule(key=keys, value=values, foreign=st.booleans())
    def another_process_writes(self, key: str, value: bytes, foreign: bool) -> None:
        """F1: a file of this namespace (or, foreign, of another one) appears."""
        self._step("F1")
        self.world_changes += 1
        name = key + self.foreign + ".bin" if foreign else self.model.name(key)
        self.fs.put(self._put(name), value)
        self.model.files[name] = (value, self.clock())
        self.model.planted.pop(name, None)
        if not foreign:
            self.removed_by_store.discard(key)

    @rule(key=keys, kind=st.sampled_from(("symlink", "fifo", "dir", "other")))
    def another_user_plants_a_node(self, key: str, kind: str) -> None:
        """S3: a symlink, FIFO, directory or another user's file appears under a key's name."""
        self._step("S3")
        self.world_changes += 1
        name = self.model.name(key)
        if kind == "other":
            self.fs.put(self._put(name), b"planted", uid=OTHER_USER)
        else:
            self.fs.plant(self._put(name), kind)
        self.model.files.pop(name, None)
        self.model.planted[name] = (kind, len(b"planted") if kind == "other" else 0)

    @rule(size=st.integers(0, 4), ours=st.booleans())
    def another_writer_leaves_a_temp_file(self, size: int, ours: bool) -> None:
        """F8, C4: a live (young) or crashed (later old) writer's temp file; S6: or another program's
        ``.state-N.tmp``, which start-up never removes."""
        self._step("F8" if ours else "S6")
        self.temp_serial += 1
        name = f".{self.temp_serial:012x}.tmp" if ours else f".state-{self.temp_serial}.tmp"
        self.fs.put(f"{DIRECTORY}/{name}", b"t" * size)
        self.model.files[name] = (b"t" * size, self.clock())

    @rule(
        op=st.sampled_from(("write", "replace", "read", "short")),
        code=st.sampled_from((errno.EIO, errno.ENOSPC)),
    )
    def fault(self, op: str, code: int) -> None:
        """B2: the next call of one operation fails (or reads short)."""
        self._step("B2")
        if op == "short":
            self.fs.short_reads(1)
        else:
            self.fs.fail(op, code)  # the model reads the same ledger

    @rule(key=keys, code=st.sampled_from((errno.EPERM, errno.EBUSY, errno.EISDIR)))
    def file_becomes_unremovable(self, key: str, code: int) -> None:
        """V5: unlink of this key's file fails until healed."""
        self._step("V5")
        self.fs.fail_unlink(f"{DIRECTORY}/{self.model.name(key)}", code)

    def _oldest_tracked_file(self) -> str | None:
        """The least recently used committed entry whose file is on disk: the next victim."""
        for key, _size, in_flight in self.model.lru:
            if not in_flight and self.model.name(key) in self.model.files:
                return key
        return None

    @rule(value=st.sampled_from(VALUES[5:]))
    def evict_a_file_that_vanished(self, value: bytes) -> None:
        """V6, C1: the next victim's file is deleted behind the store's back, then a burst of writes
        of the other keys (4 x 6 bytes: over every cap the machine draws) evicts past it: the victim
        still gets ``on_evict``, so its belief goes.
        (One rule, so that every example that fires it reaches the case, whatever else it draws.)"""
        key = self._oldest_tracked_file()
        if key is None:
            return
        self._step("C2")
        self.fs.remove(f"{DIRECTORY}/{self.model.name(key)}")
        del self.model.files[self.model.name(key)]
        self.world_changes += 1
        self.batch_set([(k, value) for k in KEYS if k != key])
        self._pass()

    @rule(value=st.sampled_from(VALUES[5:]), code=st.sampled_from((errno.EPERM, errno.EBUSY)))
    def evict_past_an_unremovable_file(self, value: bytes, code: int) -> None:
        """V5, S7: the next victim's file cannot be removed, then a burst of writes of the other keys
        needs room: eviction goes on past it (and it rests) instead of refusing the writes."""
        key = self._oldest_tracked_file()
        if key is None:
            return
        self.file_becomes_unremovable(key, code)
        self.batch_set([(k, value) for k in KEYS if k != key])
        self._pass()

    @rule()
    def heal(self) -> None:
        self._step("V5")
        self.fs.heal()

    @rule(delta=st.sampled_from(DELTAS))
    def advance(self, delta: float) -> None:
        self._step("C2")
        self.clock.advance(delta)
        self._pass()  # V3-bg: time passes, the background evictor runs

    @rule()
    def restart(self) -> None:
        """F8, C3: a new store on the same directory counts exactly this namespace's bytes."""
        self._step("F8")
        self._restart_store()

    def _restart_store(self) -> None:
        self.impl = self._new_store()
        self.model.restart()
        self._note_evictions()
        self._check_restart()

    @rule(key=keys, value=values, after=st.integers(0, 10))
    def crash_during_set(self, key: str, value: bytes, after: int) -> None:
        """C4: the process dies after ``after`` more filesystem calls; a new store starts."""
        crashed, got = self._crash_inside(
            after, lambda shadow: shadow.set(key, value), lambda: self.impl.set(key, value), key, value
        )
        if crashed:
            return
        want = self.model.set(key, value)
        assert got == want, f"C4: set({key!r}, {value!r}) -> {got}, model {want}"
        self._note_evictions()
        if want:
            self.removed_by_store.discard(key)

    @rule(key=keys, clear=st.booleans(), after=st.integers(0, 10))
    def crash_during_removal(self, key: str, clear: bool, after: int) -> None:
        """C4: the process dies inside ``delete(key)`` or ``clear()``; only what it removes may go."""
        self.heal()
        self._step("C4")
        if not clear and not hasattr(self.impl, "delete"):  # O12: the engine's form has no delete()
            return
        acknowledged = self._acknowledged()
        ours = {k for n in acknowledged if (k := self.model.key_of(n)) is not None}
        self.fs.crash_after(after)
        try:
            got = self.impl.clear() if clear else self.impl.delete(key)
        except Crash:
            self.fs.restart()
            self._after_crash(
                acknowledged, frozenset(acknowledged) if clear else frozenset([self.model.name(key)])
            )
            return
        self.fs.restart()
        want = self.model.clear() if clear else self.model.delete(key)
        assert got == want, f"C4: {'clear()' if clear else f'delete({key!r})'} -> {got}, model {want}"
        if clear:
            self.removed_by_store |= {k for k in ours if self.model.name(k) not in self.model.files}
        elif want:
            self.removed_by_store.add(key)

    @rule(after=st.integers(0, 10))
    def crash_during_start_up(self, after: int) -> None:
        """C4, F8: the process dies while a new store scans the directory, cleans up and evicts."""
        crashed, store = self._crash_inside(after, FileStoreModel.restart, self._new_store)
        if crashed:
            return
        self.impl = store
        self.model.restart()
        self._note_evictions()
        self._check_restart()

    def _planted(self) -> dict[str, tuple[str, int]]:
        """S3: the directory's nodes that are not this user's regular files, as the model has them
        (kind, bytes they take on the disk)."""
        return {
            n: ("other" if kind == "file" else kind, len(self.fs.files[f"{DIRECTORY}/{n}"].data))
            for n, (kind, _uid) in self.fs.others(DIRECTORY, tree=self._tree).items()
        }

    def _acknowledged(self) -> dict[str, bytes]:
        """This namespace's files as the model has them: each one a write acknowledged earlier."""
        return {n: data for n, (data, _m) in self.model.files.items() if self.model.key_of(n) is not None}

    def _shadow(self) -> tuple[FileStoreModel, list[str]]:
        """A copy of the model (its faults too) that tells its victims to the list beside it."""
        tried: list[str] = []
        return copy.deepcopy(self.model, {id(self.model.on_evict): tried.append}), tried

    def _names(self, keys: list[str]) -> frozenset[str]:
        return frozenset(self.model.name(k) for k in keys)

    def _crash_inside(
        self,
        after: int,
        shadow_step: Callable[[FileStoreModel], object],
        act: Callable[[], T],
        key: str | None = None,
        value: bytes = b"",
    ) -> tuple[bool, T | None]:
        """C4: ``act`` with the process dying after ``after`` more filesystem calls.  ``shadow_step`` runs
        on a copy of the model first, to learn which files ``act`` may remove (its victims).  (True, None)
        when it died (a new store's view then checked by ``_after_crash``), else (False, its answer)."""
        self.heal()
        self._step("C4")
        acknowledged = self._acknowledged()
        shadow, tried = self._shadow()
        shadow_step(shadow)
        self.fs.crash_after(after)
        try:
            got = act()
        except Crash:
            self.fs.restart()
            self._after_crash(acknowledged, self._names(tried), key, value)
            return True, None
        self.fs.restart()
        return False, got

    def _after_crash(
        self,
        acknowledged: dict[str, bytes],
        removable: frozenset[str],
        key: str | None = None,
        value: bytes = b"",
    ) -> None:
        """C4 after a crash: every file whole, nothing lost but what the interrupted call removes."""
        listing = self.fs.listing(DIRECTORY, tree=self._tree)
        for name, file in listing.items():
            if self.model.key_of(name) is None:
                continue
            if key is not None and name == self.model.name(key) and name not in acknowledged:
                assert file.data == value, f"C4: partial value under {key!r}: {file.data!r}"
            else:
                assert acknowledged.get(name) == file.data, f"C4: {name} changed to {file.data!r}"
        for name in acknowledged:
            assert name in listing or name in removable, (
                f"C4: acknowledged {name} lost; the call could remove only {sorted(removable)}"
            )
        self.model.files = {n: (f.data, f.mtime) for n, f in listing.items()}
        self.model.planted = self._planted()
        if key is not None:
            self.removed_by_store.discard(key)  # its file may or may not be there: no claim either way
        self.removed_by_store |= {
            k for n in acknowledged if n not in listing and (k := self.model.key_of(n)) is not None
        }
        self._restart_store()

    def _check_restart(self) -> None:
        evictor = getattr(self.impl, "evictor", None)
        if evictor is None:
            return
        files = self.fs.listing(DIRECTORY, tree=self._tree)
        on_disk = sum(len(f.data) for n, f in files.items() if self.model.key_of(n))
        assert evictor.total == on_disk, f"C3: total {evictor.total} != {on_disk} bytes on disk"
        now = self.clock()
        for name, file in self.fs.listing(DIRECTORY, tree=self._tree).items():
            if is_temp(name):
                assert now - file.mtime <= TEMP_MAX_AGE, f"C4/F8: stale temp {name} survived start-up"

    # -- every step -------------------------------------------------------

    def _compare(self) -> None:
        planted = self._planted()
        assert planted == self.model.planted, f"S3: planted nodes {planted} != model {self.model.planted}"
        listing = {n: (f.data, f.mtime) for n, f in self.fs.listing(DIRECTORY, tree=self._tree).items()}
        if listing != self.model.files:
            clause = self._directory_clause(listing)
            raise AssertionError(f"{clause}: directory {listing} != model {self.model.files}")
        evictor = getattr(self.impl, "evictor", None)
        if evictor is not None and hasattr(evictor, "snapshot"):
            entries = [tuple(e) for e in evictor.snapshot()]
            if entries != self.model.lru:
                # Bytes counted for a file that is not there: capacity leaked (C3).
                leaked = {e[0] for e in entries} - {e[0] for e in self.model.lru}
                clause = "C3" if any(self.model.name(k) not in listing for k in leaked) else self.clause
                raise AssertionError(f"{clause}: evictor {entries} != model {self.model.lru} (V2)")
            assert evictor.total == sum(e[1] for e in entries), "C3: total != sum of sizes"
        if hasattr(type(self.impl), "snapshot"):  # a HiCacheFile itself, not seen through the oracle's proxy
            beliefs = believed(self.impl)
            for key in KEYS:
                believes = key in beliefs
                clause = "C1" if believes else self.clause  # a belief that outlived its removal
                assert believes == self.model.believed(key), f"{clause}: belief of {key!r}"

    def _directory_clause(self, listing: dict[str, tuple[bytes, float]]) -> str:
        """The clause a directory that differs from the model's shows, the most specific first."""
        files = self.model.files
        differ = {n for n in listing.keys() | files.keys() if listing.get(n) != files.get(n)}
        if any(not n.startswith(".") and self.model.key_of(n) is None for n in differ):
            return "F1"  # another namespace's file touched, or a file not named as F1 says
        temps = {n for n in differ if n.startswith(".")}
        if any(n in files and n not in listing and not is_temp(n) for n in temps):
            return "S6"  # another program's file, named like no temp of ours, was removed
        if any(n in files for n in temps):
            return "F8"  # a temp file another (maybe live) writer owns was removed
        if temps:
            return "F8" if self.clause in ("F8", "C4") else "F3"  # a temp file left behind
        beliefs = believed(self.impl) if hasattr(type(self.impl), "snapshot") else frozenset()
        if any(n in files and n not in listing and self.model.key_of(n) in beliefs for n in differ):
            return "C1"  # the store believes a key whose file is not there
        if len(self.victims) > self.evicted_at_step:
            return "V3-bg" if self.background else "V3"  # the step evicted: the victims differ
        return self.clause

    def more_state(self) -> Hashable:
        model = self.model
        believed = tuple(k for k in KEYS if model.believed(k))
        planted = tuple(sorted(model.planted.items()))
        return model.metadata, model.ttl, believed, len(self.fs.faults.unremovable), planted


class BackgroundScanMachine(FileStoreMachine):
    """F8-bg: the file-store machine with the stores built with ``startup_scan="background"`` (the flat
    layout), their scan a rule of its own (``scan_step``, a batch of ``SCAN_BATCH`` listing nodes, in lock
    step with the model's) among every other rule: writes, reads, deletes, clears, evictions, other
    processes, faults and crashes all land between two batches.  Every step compares the directory, the
    evictor's entries (C3, V2) and the beliefs, as the base machine does; each batch also checks V3 on what
    is known, and the end of the scan C3 against the disk (when no other process changed the namespace
    meanwhile) and F8's temp-file sweep."""

    startup_scan = "background"

    def __init__(self) -> None:
        super().__init__()
        self.scan_began = 0  # world_changes when the scan under way began

    @initialize(
        cap=CAPS,
        ratio=RATIOS,
        min_free=FLOORS,
        disk_size=DISKS,
        metadata=st.booleans(),
        ttl=TTLS,
        found=st.lists(st.tuples(keys, values), max_size=len(KEYS), unique_by=lambda p: p[0]),
    )
    def build(
        self,
        cap: int,
        ratio: float,
        min_free: int,
        disk_size: int,
        metadata: bool,
        ttl: float,
        found: tuple[tuple[str, bytes], ...] = (),
    ) -> None:
        """The store as the base machine builds it; then, when ``found`` has pages, a new store on the
        directory they were written into (by another process, alternately one second apart and at one
        time: F8's ties in the listing's order), so that its scan has pages to adopt."""
        super().build(cap, ratio, min_free, disk_size, metadata, ttl)
        if not found:
            return
        for i, (key, value) in enumerate(found):
            name, mtime = self.model.name(key), self.clock() - i // 2
            self.fs.put(self._put(name), value, mtime=mtime)
            self.model.files[name] = (value, mtime)
        self._restart_store()

    def _check_restart(self) -> None:
        """F8-bg: nothing is promised of the accounting until the scan ends (``scan_step``)."""
        self.scan_began = self.world_changes

    @precondition(lambda self: self.ready)
    @rule()
    def scan_step(self) -> None:
        """F8-bg: one batch of the background scan."""
        self._step("F8-bg")
        running = self.model.listing.left is not None
        got, want = self.impl._scan_step(), self.model.scan_step()
        assert got == want, f"F8-bg: a scan step says the listing has more: {got}, model {want}"
        self._note_evictions()
        assert self.impl.wait_started(0) == (not want), f"F8-bg: wait_started(0) after a step that said {got}"
        if running:  # (after the end a step does nothing: a probe's adoption may be over the cap, as ever)
            self._check_known_within_the_cap()
            if not want:
                self._check_scan_ended()

    @precondition(lambda self: self.ready)
    @rule()
    def close_the_scan(self) -> None:
        """F8-bg: ``close()`` stops the scan: nothing more is adopted; the store serves on."""
        self._step("F8-bg")
        self.impl.close()
        self.model.listing.left = None
        assert self.impl.wait_started(0), "F8-bg: wait_started(0) is False after close()"
        assert not self.impl._scan_step(), "F8-bg: a scan step after close() says the listing has more"

    @precondition(lambda self: self.ready)
    @rule(after=st.integers(0, 6))
    def crash_during_scan_step(self, after: int) -> None:
        """C4, F8-bg: the process dies inside a batch (its sweep, or the evictions after it)."""
        crashed, got = self._crash_inside(after, FileStoreModel.scan_step, self.impl._scan_step)
        if crashed:
            return
        running = self.model.listing.left is not None
        want = self.model.scan_step()
        assert got == want, f"F8-bg: a scan step says the listing has more: {got}, model {want}"
        self._note_evictions()
        if running and not want:
            self._check_scan_ended()

    def _check_known_within_the_cap(self) -> None:
        """V3 on what is known: after a batch the entries are within the cap, or none left can be evicted."""
        model = self.model
        if model.cap <= 0 or model.background:
            return
        unremovable, resting = model._spared()
        candidates = [e for e in model.lru if not (e[2] or e[0] in unremovable or e[0] in resting)]
        total = sum(e[1] for e in model.lru)
        assert total <= model.cap or not candidates, f"V3: {total} bytes known after a batch, cap {model.cap}"

    def _check_scan_ended(self) -> None:
        """F8-bg once the scan has ended: C3 (the total is the bytes of this namespace's pages on disk)
        when no other process changed the namespace since it began; F8 (no temp file old when the listing
        began survived it)."""
        listing = self.fs.listing(DIRECTORY)
        if self.world_changes == self.scan_began:
            on_disk = sum(len(f.data) for n, f in listing.items() if self.model.key_of(n))
            total = self.impl.evictor.total
            assert total == on_disk, f"C3: total {total} != {on_disk} bytes on disk once the scan ended"
        began = self.model.listing.now
        for name, file in listing.items():
            if is_temp(name) and name in self.model.listing.files:
                assert began - file.mtime <= TEMP_MAX_AGE, f"F8: stale temp {name} survived the scan"
