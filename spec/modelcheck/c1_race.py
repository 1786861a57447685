"""C1 under every interleaving: a probe racing a removal never leaves a belief behind the removal.

Each scenario runs two real threads on one store under the deterministic
scheduler of :mod:`spec.modelcheck.interleavings`.  The marked points are every
call into the fake filesystem (``FakeFileSystem.before``) and every
acquisition of the store's lock (replaced by a :class:`ExploredLock`), so
every way the probe's ``stat``/read, its epoch check and its teaching can
interleave with the remover's belief drop and ``unlink`` is run, once each.

After both threads finish: if the key's file is gone (only this store removes
files here), the store must neither believe the key nor answer ``exists`` True
(C1), and its invariants must hold.

The scenarios: ``exists``, ``get`` and ``set`` (whose probe finds the file)
each against ``delete``, ``clear``, and an eviction made by another key's
``set``; the probes start with no live belief, so they do probe.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hicache.file_store import HiCacheFile

from ..machines.file_store import believed as believes
from ..world.clock import FakeClock
from ..world.filesystem import FakeFileSystem
from .explorer import Configuration, Counterexample, Result
from .interleavings import ExploredLock, ExploringScheduler, explore_schedules

__all__ = ["SCENARIOS", "Scenario", "accounting_scenario", "check_scenario", "results"]

DIRECTORY = "/cache"
KEY, OTHER = "a", "b"


@dataclass(frozen=True)
class Scenario:
    """A probe of ``KEY`` racing a removal of it."""

    probe: str  # exists, get, set
    removal: str  # delete, clear, evict

    @property
    def name(self) -> str:
        return f"{self.probe} vs {self.removal}"


SCENARIOS = tuple(Scenario(p, r) for p in ("exists", "get", "set") for r in ("delete", "clear", "evict"))


def _schedule(store: Any, lock: Any) -> None:
    """Put ``lock`` wherever the store and its collaborators take the store's lock (its evictor's too)."""
    store._lock = lock
    store.evictor._lock = lock
    knowledge = getattr(store, "_knowledge", None)  # HiCacheFile's beliefs and accounting (C1, F4)
    if knowledge is not None:
        knowledge.lock = lock


def _world(
    factory: Callable[..., Any], scheduler: ExploringScheduler, removal: str
) -> tuple[Any, FakeFileSystem]:
    """A store holding KEY's file, tracked but not believed (its belief expired), on a scheduled lock."""
    clock = FakeClock(1000.0)
    fs = FakeFileSystem(clock)
    config = {
        "enable_metadata_cache": True,
        "metadata_ttl": 0.5,
        "max_size": 5 if removal == "evict" else 0,
        "eviction_ratio": 1.0,
    }
    store = factory(DIRECTORY, namespace="_ns", extra_config=config, fs=fs, clock=clock)
    assert store.set(KEY, b"xy")
    clock.advance(1.0)  # the belief expires: the probes below must stat or read
    lock = ExploredLock(scheduler)
    _schedule(store, lock)  # the store's RLock, shared with its evictor, now a marked point
    fs.before = lambda op, path: scheduler.point(f"{op} {path.rsplit('/', 1)[-1]}")
    return store, fs


def _probe(store: Any, probe: str) -> Callable[[], None]:
    def run() -> None:
        if probe == "set":
            store.set(KEY, b"xy")
        else:
            getattr(store, probe)(KEY)

    return run


def _removal(store: Any, removal: str) -> Callable[[], None]:
    def run() -> None:
        if removal == "delete":
            store.delete(KEY)
        elif removal == "clear":
            store.clear()
        else:
            store.set(OTHER, b"abcd")  # 2 + 4 bytes > the cap of 5: evicts KEY

    return run


def check_scenario(factory: Callable[..., Any], scenario: Scenario) -> Result:
    """Every schedule of one scenario, as a model-check result (transitions = schedules run)."""

    def run_once(scheduler: ExploringScheduler) -> tuple[Any, str | None]:
        store, fs = _world(factory, scheduler, scenario.removal)
        errors = scheduler.run([_probe(store, scenario.probe), _removal(store, scenario.removal)])
        fs.before = None
        names = tuple(sorted(fs.listing(DIRECTORY)))
        gone = f"{KEY}_ns.bin" not in names
        believed = KEY in believes(store)
        final = (names, believed)
        if errors:
            return final, f"a thread failed: {errors[0]!r}"
        if gone and believed:
            return final, f"C1: {KEY!r} is believed after this store removed its file"
        if gone and store.exists(KEY):
            return final, f"C1: exists({KEY!r}) is True after this store removed its file"
        store.check_invariants()
        return final, None

    start = time.perf_counter()
    explored = explore_schedules(run_once)
    result = Result(configuration=scenario.name, max_depth=explored.max_choices)
    result.states = result.abstract_states = len(explored.outcomes)
    result.transitions = explored.schedules
    result.diameter = result.levels = explored.max_choices
    result.complete = explored.violation is None
    result.seconds = time.perf_counter() - start
    if explored.violation is not None:
        schedule, steps, problem = explored.violation
        trace = tuple((step,) for step in steps)
        result.counterexample = Counterexample(f"{scenario.name} schedule {schedule}", trace, problem)
    return result


def results(factory: Callable[..., Any] = HiCacheFile) -> list[Result]:
    """Every scenario, every schedule."""
    return [check_scenario(factory, scenario) for scenario in SCENARIOS]


def domain(wide: bool) -> list[Configuration]:
    """Not a state-space domain: :func:`results` is the check (see ``components``)."""
    return []


def accounting_scenario(factory: Callable[..., Any], probe: str = "get") -> Result:
    """Every schedule of a probe of ``c`` (a miss) racing a ``set('c')``; then ``set('b')`` needs room.

    Checks C3/V3 afterwards: the evictor tracks exactly the bytes on disk, so the
    cap holds.  (A stale miss that forgets ``c`` after it was published leaves it
    untracked: docs/LINEARIZABILITY.md, finding 4.)
    """

    def run_once(scheduler: ExploringScheduler) -> tuple[Any, str | None]:
        clock = FakeClock(1000.0)
        fs = FakeFileSystem(clock)
        config = {"enable_metadata_cache": True, "metadata_ttl": -1, "max_size": 6, "eviction_ratio": 1.0}
        store = factory(DIRECTORY, namespace="_ns", extra_config=config, fs=fs, clock=clock)
        lock = ExploredLock(scheduler)
        _schedule(store, lock)
        fs.before = lambda op, path: scheduler.point(f"{op} {path.rsplit('/', 1)[-1]}")

        def probe_c() -> None:
            getattr(store, probe)("c")

        def set_c() -> None:
            store.set("c", b"xyz")

        errors = scheduler.run([probe_c, set_c])
        fs.before = None
        store.set("b", b"abcd")
        listing = fs.listing(DIRECTORY)
        on_disk = sum(len(f.data) for name, f in listing.items() if name.endswith("_ns.bin"))
        final = (tuple(sorted(listing)), store.evictor.total)
        if errors:
            return final, f"a thread failed: {errors[0]!r}"
        if store.evictor.total != on_disk:
            return final, f"C3: the evictor tracks {store.evictor.total} bytes, {on_disk} are on disk"
        return final, None

    start = time.perf_counter()
    explored = explore_schedules(run_once)
    result = Result(configuration=f"{probe} miss vs set", max_depth=explored.max_choices)
    result.states = result.abstract_states = len(explored.outcomes)
    result.transitions = explored.schedules
    result.complete = explored.violation is None
    result.seconds = time.perf_counter() - start
    if explored.violation is not None:
        schedule, steps, problem = explored.violation
        result.counterexample = Counterexample(
            f"{probe} miss vs set schedule {schedule}", tuple((s,) for s in steps), problem
        )
    return result
