"""Bounded exhaustive refinement check of the file store (F, V, C1-C3, B2) against ``spec.models.file_store``.

The domain: 2 keys, 2 values of different sizes, a cap that two files overflow
(or no cap), beliefs on (TTL -1 or 2 s on a 1 s clock) or off, and the world's
moves: another process writes or deletes a file (of this namespace, or writes
one of another namespace); each fault choice of the fake
filesystem (EIO/ENOSPC on write, EIO on rename, EIO on read, a short read, an
unremovable file with EPERM or EBUSY) armed one at a time, then healed; the
clock; a restart (a new store on the same directory).

Refinement mapping: the directory (names, bytes, modification-time *ranks*:
only their order matters, for start-up), the evictor's ``snapshot()`` (C3,
V2), the live beliefs with their ages, the armed faults and the unremovable
files; the model (``FileStoreModel``) is mapped the same way.  Fingerprints
add the expired beliefs not purged yet.  Answers include the filesystem calls
an ``exists`` made (F6: none on a live belief, else one).

The state space is large (every combination of files, accounting, beliefs and
armed faults), so CI explores a depth bound rather than a fixpoint.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from hicache.file_store import HiCacheFile

from ..models.file_store import FileStoreModel
from ..world.clock import FakeClock
from ..world.filesystem import FakeFileSystem
from .explorer import Configuration, Op, Pair
from .metadata_cache import START, stored

__all__ = ["FileStorePair", "configurations", "domain"]


DIRECTORY = "/cache"
NAMESPACE = "_ns"
KEYS = ("a", "b")
VALUES = (b"xy", b"abcd")
FAULTS: tuple[tuple[str, int], ...] = (
    ("write", errno.EIO),
    ("write", errno.ENOSPC),
    ("replace", errno.EIO),
    ("read", errno.EIO),
    ("short", 0),
)
TEMP_MAX_AGE = 10.0
FOREIGN = "_zz"  # another namespace sharing the directory


class FileStorePair(Pair):
    """A store built by ``factory`` on a FakeFileSystem, and the model, in one world."""

    def __init__(
        self, factory: Callable[..., Any], *, cap: int, ratio: float, metadata: bool, ttl: float
    ) -> None:
        self.factory, self.ttl, self.metadata = factory, ttl, metadata
        self.clock = FakeClock(START)
        self.fs = FakeFileSystem(self.clock)
        self.extra_config: dict[str, object] = {
            "max_size": cap,
            "eviction_ratio": ratio,
            "min_free_space": 0,
            "enable_metadata_cache": metadata,
            "metadata_ttl": ttl,
            "temp_max_age": TEMP_MAX_AGE,
        }
        self.implementation = self._new_store()
        self.model = FileStoreModel(
            namespace=NAMESPACE,
            cap=cap,
            ratio=ratio,
            min_free=0,
            disk_size=self.fs.disk_size,
            metadata=metadata,
            ttl=ttl,
            temp_max_age=TEMP_MAX_AGE,
            clock=self.clock,
            faults=self.fs.faults,
            directory=DIRECTORY,
        )
        self.model.restart()

    def _new_store(self) -> Any:
        return self.factory(
            DIRECTORY, namespace=NAMESPACE, extra_config=self.extra_config, fs=self.fs, clock=self.clock
        )

    def _path(self, key: str) -> str:
        return f"{DIRECTORY}/{self.model.name(key)}"

    def operations(self) -> list[Op]:
        model = self.model
        ops: list[Op] = []
        for key in KEYS:
            ops.extend(("set", key, value) for value in VALUES)
            ops.extend(
                [("get", key), ("get_into", key, 0), ("get_into", key, 1), ("exists", key), ("delete", key)]
            )
        ops.extend([("batch_exists", KEYS), ("clear",)])
        for key in KEYS:
            if model.name(key) in model.files:
                ops.append(("others_delete", key))
            ops.extend(("others_write", key, value) for value in VALUES)
        ops.append(("others_write", KEYS[0], VALUES[0], FOREIGN))  # another namespace's file (F1)
        ledger = self.fs.faults
        armed = any(ledger.pending(op, "model") for op, _code in FAULTS) or ledger.unremovable
        if not armed:  # one fault at a time: each fault choice, then heal
            ops.extend(("fault", op, code) for op, code in FAULTS)
            ops.extend(("unremovable", KEYS[0], code) for code in (errno.EPERM, errno.EBUSY))
        else:
            ops.append(("heal",))
        if self.metadata and self.ttl >= 0:
            ops.append(("advance",))
        ops.append(("restart",))
        return ops

    def perform(self, op: Op) -> tuple[Any, Any]:
        name, *args = op
        impl, model, fs = self.implementation, self.model, self.fs
        if name == "get_into":
            key, delta = str(args[0]), int(args[1])  # type: ignore[call-overload]
            file = model.files.get(model.name(key))
            size = (len(file[0]) if file is not None else 3) + delta
            buffer = bytearray(b"\xee" * size)
            got = impl.get_into(key, buffer)
            want = model.get(key, buffer_size=size)
            return (got, bytes(buffer) if got else None), (want is not None, want)
        if name == "exists":
            key = str(args[0])
            believed, calls = model.believed(key), sum(fs.calls.values())
            got = impl.exists(key)
            return (got, sum(fs.calls.values()) - calls), (model.exists(key), 0 if believed else 1)
        if name in ("set", "get", "delete", "clear", "batch_exists"):
            return getattr(impl, str(name))(*args), getattr(model, str(name))(*args)
        self._world(str(name), args)
        return None, None

    def _world(self, name: str, args: list[Hashable]) -> None:
        model, fs = self.model, self.fs
        if name == "others_delete":
            fs.remove(self._path(str(args[0])))
            del model.files[model.name(str(args[0]))]
        elif name == "others_write":
            key, value = str(args[0]), args[1]
            assert isinstance(value, bytes)
            file_name = key + FOREIGN + ".bin" if len(args) > 2 else model.name(key)
            fs.put(f"{DIRECTORY}/{file_name}", value)
            model.files[file_name] = (value, self.clock())
        elif name == "fault":
            op, code = str(args[0]), int(args[1])  # type: ignore[call-overload]
            if op == "short":
                fs.short_reads(1)
            else:
                fs.fail(op, code)  # the model reads the same ledger
        elif name == "unremovable":
            fs.fail_unlink(self._path(str(args[0])), int(args[1]))  # type: ignore[call-overload]
        elif name == "heal":
            fs.heal()
        elif name == "advance":
            self.clock.advance(1.0)
        elif name == "restart":
            self.implementation = self._new_store()
            model.restart()
        else:
            raise ValueError(f"unknown operation {name!r}")

    # -- the refinement mapping ------------------------------------------------

    def _files(self, files: Mapping[str, tuple[bytes, float]]) -> Hashable:
        ranks = {m: i for i, m in enumerate(sorted({m for _d, m in files.values()}))}
        return tuple(sorted((n if n[0] != "." else ".tmp", d, ranks[m]) for n, (d, m) in files.items()))

    def _beliefs(self, births: list[tuple[Hashable, float]]) -> Hashable:
        """The live beliefs with their ages, oldest first; those born at one instant in key order: the
        store's beliefs have no bound, so their order among equal births is unobservable (they expire
        together, none is evicted), and start-up births them at once in the listing's order (F8)."""
        now = self.clock()
        live = [(k, now - b) for k, b in births if self.ttl < 0 or now - b <= self.ttl]
        return tuple(sorted(live, key=lambda belief: (-belief[1], repr(belief[0]))))

    def abstract_implementation(self) -> Hashable:
        impl, fs = self.implementation, self.fs
        files = {n: (f.data, f.mtime) for n, f in fs.listing(DIRECTORY).items()}
        # The store's MetadataCache is read through its snapshot() (the beliefs with their ages).
        cache = getattr(impl, "_beliefs", None)
        beliefs = list(cache.snapshot()) if cache is not None else []
        pending = tuple(fs.pending_faults(op) for op in ("write", "replace", "read"))
        return (
            self._files(files),
            tuple(tuple(e) for e in impl.evictor.snapshot()),
            self._beliefs(beliefs),
            pending,
            tuple(sorted(self.fs.faults.unremovable)),
        )

    def abstract_spec(self) -> Hashable:
        model = self.model
        beliefs = list(model.beliefs.items()) if model.metadata else []
        return (
            self._files(model.files),
            tuple(model.lru),
            self._beliefs(beliefs),
            tuple(self.fs.faults.pending(op, "model") for op in ("write", "replace", "read")),
            tuple(sorted(self.fs.faults.unremovable)),
        )

    def fingerprint(self) -> Hashable:
        cache = getattr(self.implementation, "_beliefs", None)
        stale: tuple[Hashable, ...] = ()
        if cache is not None and self.ttl >= 0:
            now = self.clock()
            stale = tuple(k for k, b in stored(cache, self.clock) if now - b > self.ttl)
        return self.abstract_implementation(), stale, self.fs.faults.pending("short", "model")

    def check_invariants(self) -> None:
        check = getattr(self.implementation, "check_invariants", None)
        if check is not None:
            check()


CONFIGS: tuple[tuple[int, float, bool, float], ...] = (
    # cap, eviction ratio, beliefs on, TTL
    (5, 1.0, True, -1),
    (5, 0.5, True, 2.0),
    (5, 1.0, False, -1),
    (0, 1.0, True, -1),
)


def configurations(
    factory: Callable[..., Any] = HiCacheFile, configs: tuple[tuple[int, float, bool, float], ...] = CONFIGS
) -> list[Configuration]:
    """One configuration per (cap, ratio, beliefs, TTL)."""

    def config(cap: int, ratio: float, metadata: bool, ttl: float) -> Configuration:
        def build() -> Pair:
            return FileStorePair(factory, cap=cap, ratio=ratio, metadata=metadata, ttl=ttl)

        beliefs = f"beliefs ttl={ttl:g}" if metadata else "no beliefs"
        return Configuration(f"cap={cap} ratio={ratio:g} {beliefs} keys=2 values=2", build)

    return [config(*c) for c in configs]


def domain(wide: bool) -> list[Configuration]:
    """The same configurations in both; ``--depth`` is what goes deeper here."""
    return configurations()
