"""Lock-step machine for the LRU file evictor on its own (V1-V6, C3) against ``spec.file_store``.

The store's machine only ever sees the evictor between operations, when no
write is in flight.  This one drives the evictor's own API with writes held in
flight across steps (reserve now, publish and commit or abort later), so V5
(never evict a write in flight) and V4 are exercised with interleavings.

The factory is called as ``factory(fs, path_of, directory=..., max_size=...,
min_free_space=..., eviction_ratio=..., on_evict=...)``
(``LRUFileEvictor``'s signature).  Checked every step: ``snapshot()`` equals
the model's entries, ``total`` their sum (C3), the ``on_evict`` calls so far
equal the model's victims (V6: once per victim tried, in order, never for
abort or clear), and the directory equals the model's.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Hashable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from spec.fake_fs import FakeFileSystem
from spec.fakes import FakeClock
from spec.file_store import FileStoreModel
from spec.machines._base import LockstepMachine

__all__ = ["file_evictor_machine"]

DIRECTORY = "/d"
KEYS = ("a", "b", "c", "d")
FOREIGN = "someone-else.dat"

keys = st.sampled_from(KEYS)
sizes = st.integers(0, 9)


def path_of(key: str) -> str:
    return f"{DIRECTORY}/{key}.bin"


def file_evictor_machine(factory: Callable[..., Any]) -> type[LockstepMachine]:
    """A machine class that checks ``factory``'s evictors against the model."""

    class FileEvictorMachine(LockstepMachine):
        impl: Any
        model: FileStoreModel

        def __init__(self) -> None:
            super().__init__()
            self.ready = False
            self.clock = FakeClock(0.0)
            self.fs = FakeFileSystem(self.clock)
            self.fs.mkdir(DIRECTORY)
            self.callbacks: list[str] = []
            self.clause = "V2"  # the clause of the step under way: what a difference found after it breaks

        @initialize(
            cap=st.sampled_from((0, 10, 16)),
            ratio=st.sampled_from((1.0, 0.5)),
            min_free=st.sampled_from((0, 0, 8)),
            disk_size=st.sampled_from((1 << 20, 30)),
        )
        def build(self, cap: int, ratio: float, min_free: int, disk_size: int) -> None:
            self.fs.disk_size = disk_size
            self.impl = factory(
                self.fs,
                path_of,
                directory=DIRECTORY,
                max_size=cap,
                min_free_space=min_free,
                eviction_ratio=ratio,
                on_evict=self.callbacks.append,
            )
            self.model = FileStoreModel(
                namespace="",
                cap=cap,
                ratio=ratio,
                min_free=min_free,
                disk_size=disk_size,
                metadata=False,
                ttl=-1,
                temp_max_age=0,
                clock=self.clock,
            )
            self.ready = True

        @precondition(lambda self: self.ready)
        @rule(key=keys, size=sizes)
        def reserve(self, key: str, size: int) -> None:
            """V3, V5, V6."""
            self.clause = "V3"
            got, want = self.impl.reserve(key, size), self.model.reserve(key, size)
            assert got == want, (
                f"{self._eviction_clause(got)}: reserve({key!r}, {size}) -> {got}, model {want}"
            )

        @precondition(lambda self: self.ready)
        @rule(key=keys, size=sizes)
        def write(self, key: str, size: int) -> None:
            """What the store does: reserve, and when admitted, write and commit at once."""
            self.reserve(key, size)
            if any(e[0] == key and e[2] for e in self.model.lru):
                self._publish(key, size)

        def _publish(self, key: str, size: int) -> None:
            self.fs.put(path_of(key), b"x" * size)
            self.model.files[self.model.name(key)] = (b"x" * size, self.clock())
            self.impl.commit(key)
            self.model.commit(key)

        @precondition(lambda self: self.ready)
        @rule(index=st.integers(0, 3))
        def publish(self, index: int) -> None:
            """V4: a write in flight lands on disk and is committed."""
            self.clause = "V4"
            flying = [e for e in self.model.lru if e[2]]
            if not flying:
                return
            key, size, _ = flying[index % len(flying)]
            self._publish(key, size)

        @precondition(lambda self: self.ready)
        @rule(key=keys)
        def commit(self, key: str) -> None:
            """V4 (also of a key not in flight: a no-op)."""
            self.clause = "V4"
            self.impl.commit(key)
            self.model.commit(key)

        @precondition(lambda self: self.ready)
        @rule(key=keys)
        def abort(self, key: str) -> None:
            """V4, V6: bytes given back, no callback."""
            self.clause = "V4"
            self.impl.abort(key)
            self.model.abort(key)

        @precondition(lambda self: self.ready)
        @rule(key=keys, known=st.booleans())
        def touch(self, key: str, known: bool) -> None:
            """V4: an untracked file is adopted with its real size."""
            self.clause = "V4"
            file = self.model.files.get(self.model.name(key))
            size = (len(file[0]) if file is not None else 3) if known else None
            got, want = self.impl.touch(key, size), self.model.touch(key, size)
            assert got == want, f"V4: touch({key!r}, {size}) -> {got}, model {want}"

        @precondition(lambda self: self.ready)
        @rule(key=keys)
        def discard(self, key: str) -> None:
            """V4: a file found missing is dropped (F4), a write in flight is not."""
            self.clause = "V4"
            got, want = self.impl.discard(key), self.model.discard(key)
            assert got == want, f"V4: discard({key!r}) -> {got}, model {want}"

        @precondition(lambda self: self.ready)
        @rule()
        def evict(self) -> None:
            """V3 with nothing to write (start-up)."""
            self.clause = "V3"
            got, want = self.impl.evict(), self.model.evict()
            assert got == want, f"{self._eviction_clause(got)}: evict() -> {got}, model {want}"

        @precondition(lambda self: self.ready)
        @rule()
        def clear(self) -> None:
            """V6: no callbacks; writes in flight keep their entries."""
            self.clause = "V6"
            self.impl.clear()
            self.model.forget_committed()

        @precondition(lambda self: self.ready)
        @rule(index=st.integers(0, 3))
        def another_process_deletes(self, index: int) -> None:
            """V5: a victim already gone counts as evicted."""
            self.clause = "V5"
            present = sorted(n for n in self.model.files if n != FOREIGN)
            if present:
                name = present[index % len(present)]
                self.fs.remove(f"{DIRECTORY}/{name}")
                del self.model.files[name]

        @precondition(lambda self: self.ready)
        @rule(size=st.integers(0, 20))
        def other_files_take_disk_space(self, size: int) -> None:
            """V3: free space is shared with files the evictor does not own."""
            self.clause = "V3"
            self.fs.put(f"{DIRECTORY}/{FOREIGN}", b"f" * size)
            self.model.files[FOREIGN] = (b"f" * size, self.clock())

        @precondition(lambda self: self.ready)
        @rule(index=st.integers(0, 3), code=st.sampled_from((errno.EPERM, errno.EBUSY, errno.EIO)))
        def file_becomes_unremovable(self, index: int, code: int) -> None:
            """V5: one of the tracked files (the likely next victims) cannot be removed."""
            self.clause = "V5"
            tracked = [e[0] for e in self.model.lru] or list(KEYS)
            key = tracked[index % len(tracked)]
            self.fs.fail_unlink(path_of(key), code)
            self.model.unremovable.add(self.model.name(key))

        @precondition(lambda self: self.ready)
        @rule()
        def heal(self) -> None:
            self.clause = "V5"
            self.fs.heal()
            self.model.unremovable.clear()

        def _lost_in_flight(self) -> bool:
            """Whether a write the model has in flight is gone from the evictor (V5)."""
            kept = {e[0] for e in self.impl.snapshot() if e[2]}
            return any(e[2] and e[0] not in kept for e in self.model.lru)

        def _eviction_clause(self, got: object) -> str:
            """The clause an eviction that differs from the model's breaks: V5 when a write in flight
            was evicted or an unremovable file wedged eviction (a refusal the model does not make),
            else V3."""
            wedged = got is False and bool(self.model.unremovable)
            return "V5" if wedged or self._lost_in_flight() else "V3"

        def check_step(self) -> None:
            if not self.ready:
                return
            if hasattr(self.impl, "check_invariants"):
                self.impl.check_invariants()
            entries = [tuple(e) for e in self.impl.snapshot()]
            if entries != self.model.lru:
                clause = "V5" if self._lost_in_flight() else self.clause
                raise AssertionError(f"{clause}: entries {entries} != model {self.model.lru} (V2)")
            assert self.impl.total == sum(e[1] for e in entries), "C3: total != sum of sizes"
            if self.callbacks != self.model.evicted:
                # Fewer victims tried than the model, the missing ones unremovable: eviction stopped at
                # a file it could not remove instead of going on with the next victim (V5).
                done, want = self.callbacks, self.model.evicted
                untried = want[len(done) :] if want[: len(done)] == done else []
                unremovable = self.model.unremovable
                wedged = bool(untried and done) and self.model.name(done[-1]) in unremovable
                clause = "V5" if wedged else "V6"
                raise AssertionError(f"{clause}: on_evict {done} != {want}")
            listing = {n: (f.data, f.mtime) for n, f in self.fs.listing(DIRECTORY).items()}
            assert listing == self.model.files, (
                f"{self.clause}: directory {listing} != model {self.model.files}"
            )

        def abstract_state(self) -> Hashable:
            if not self.ready:
                return None
            model = self.model
            return (
                model.cap,
                model.ratio,
                model.min_free,
                model.disk_size,
                tuple(model.lru),
                tuple(sorted(model.more.items())),
                tuple(sorted(model.published)),
                tuple(sorted((n, len(d)) for n, (d, _m) in model.files.items())),
                tuple(sorted(model.unremovable)),
            )

    return FileEvictorMachine
