"""The components the oracle knows: which machine, which spec, which calls, which clauses.

Each component names the lock-step machine of the project's own tests (the
oracle runs that machine, never a copy), the spec class it replays against,
the spec-level interface (constructor and method parameters), the groups a
target may leave out, and how to name the clause a divergence breaks.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spec.fakes import FakeClock
from spec.oracle._session import Call, OneShot, Replay, live

__all__ = ["COMPONENTS", "Component", "Projection", "available_components"]


@dataclass(frozen=True)
class Projection:
    """How an answer that is not a plain value is compared (and written in a reproduction)."""

    impl: Callable[[Any], Any]
    spec: Callable[[Any], Any]
    render: str  # a format string over the result variable name ``{r}``


@dataclass(frozen=True)
class Component:
    name: str
    title: str
    machine_module: str
    machine_function: str
    spec_module: str
    spec_class: str
    constructor: tuple[str, ...]
    methods: Mapping[str, tuple[str, ...]]
    required: tuple[str, ...]
    classify: Callable[[Replay, Mapping[str, Any]], list[str]]
    optional_parameters: Mapping[str, str] = field(default_factory=dict)
    optional_methods: Mapping[str, str] = field(default_factory=dict)
    rules_for: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    projections: Mapping[str, Projection] = field(default_factory=dict)
    pooled: frozenset[str] = frozenset()  # methods whose first argument is the pool (per-pool form)
    model_attribute: str = "model"
    probe: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(default_factory=dict)
    probe_text: str = ""  # how the target is built, for the usage error when the probe fails
    replayable: bool = True  # False: the machine acts on a world beside the target (a fake filesystem)
    rule_clauses: Mapping[str, str] = field(default_factory=dict)  # machine rule -> clause (not replayable)
    child: str | None = None  # the registry method that hands out per-pool objects
    child_methods: frozenset[str] = frozenset()  # methods of those per-pool objects
    mirrored: frozenset[str] = frozenset()  # queries that the spec answers when the target has none
    # Methods the machine also calls on the registry itself: method -> why, when the registry lacks one
    # that its pools have (the group "registry <method>" is left out; its rules in ``rules_for``).
    registry_methods: Mapping[str, str] = field(default_factory=dict)
    # The clause that promises every constructor argument the machine picks (O5: a refusal is its FAIL).
    constructor_clause: str = ""
    clauses: tuple[str, ...] = ()  # the clauses a run checks (those not failed nor left out pass)
    # Groups a run can set aside (O2: after their clause fails; O3: on request, --leave-out): the rules
    # that exercise the clause, hidden from the machine.
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Groups set aside by running only examples that leave this constructor parameter at None (the rule
    # that exercises M6 is the bound itself).
    group_parameters: Mapping[str, str] = field(default_factory=dict)
    # O3: the design choices a target declares (name -> the values allowed, the default first); the
    # machine and the spec are built with the declared values as keyword arguments.
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # How answers are compared under a declared choice, where it differs: (choice, value) -> projections.
    declared_projections: Mapping[tuple[str, str], Mapping[str, Projection]] = field(default_factory=dict)
    # The project's own classes whose API differs from the component's: put behind its interface (a
    # function of the machine module: target -> target; anything else is returned as it is).
    wrap: str = ""
    # Clauses that only the rules of another clause's group exercise: not checked (so not passed) while
    # that group is left out (S7's rest needs V5's unremovable files).
    depends: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def wrapped(self, target: Callable[..., Any]) -> Callable[..., Any]:
        if not self.wrap:
            return target
        return getattr(importlib.import_module(self.machine_module), self.wrap)(target)  # type: ignore[no-any-return]

    def machine(self) -> Callable[[Callable[..., Any]], Any]:
        """The machine builder of the project's tests (raises ImportError until it exists)."""
        return getattr(importlib.import_module(self.machine_module), self.machine_function)  # type: ignore[no-any-return]

    def probe_arguments(self) -> dict[str, Any]:
        """Constructor arguments of the probe instance (fresh each time)."""
        return dict(self.probe() if callable(self.probe) else self.probe)

    def spec_factory(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(self.spec_module), self.spec_class)  # type: ignore[no-any-return]


def _args(call: Call) -> dict[str, Any]:
    return {k: live(v) for k, v in call.bound}


def _classify_metadata(result: Replay, init: Mapping[str, Any]) -> list[str]:
    """Name the M clauses a metadata-cache divergence implicates, the most specific first."""
    from spec.metadata_cache import MetadataCacheSpec

    last = result.calls[-1]
    if last.method == "stats":
        return ["M8"]
    ttl = float(init["ttl_seconds"])
    clock = FakeClock(result.calls[0].now or 0.0)
    model = MetadataCacheSpec(
        ttl, max_entries=init.get("max_entries"), clock=clock, eviction=init.get("eviction", "birth")
    )
    found: list[str] = []
    seen: set[Any] = set()
    for call in result.calls[:-1]:
        clock.set(max(clock(), call.now or 0.0))
        if call.method == "add":
            key = _args(call)["key"]
            if key in seen and key in model.births:
                found.append("M3")
            seen.add(key)
            model.add(key)
        elif call.method == "contains":  # under M6-lru a hit changes the eviction order
            model.contains(_args(call)["key"])
        elif call.method == "remove":
            model.remove(_args(call)["key"])
        elif call.method == "clear":
            model.clear()
    now = last.now or 0.0
    bound = init.get("max_entries")
    added = {_args(c)["key"] for c in result.calls if c.method == "add"}
    key = _args(last).get("key")
    asked = [model.births.get(key)] if last.method == "contains" else list(model.births.values())
    if any(birth is not None and now - birth == ttl for birth in asked):
        found.append("M2")  # the query (a contains, or a len over every key) sits on a boundary
    if model.evictions or (bound is not None and len(added) > bound):
        found.append("M6")
    if last.method == "__len__" or any(c.method in ("remove", "clear") for c in result.calls):
        found.append("M5")
    if not found:
        found.append("M2")  # liveness itself: nothing else is involved
    if last.method == "contains":
        found.append("M4")
    return list(dict.fromkeys(found)) or ["M4"]


def _bad_input(call: Call) -> list[str]:
    """B1 for a call with a negative ``keep_pages`` (the spec's answer: ValueError)."""
    keep = _args(call).get("keep_pages")
    return ["B1"] if isinstance(keep, int) and keep < 0 else []


def _stats_spec(model: Any) -> tuple[int, int, int]:
    return (model.hits, model.misses, model.evictions)


def _stats_impl(answer: Any) -> tuple[int, int, int]:
    return (answer.hits, answer.misses, answer.evictions)


METADATA_CACHE = Component(
    clauses=("M2", "M3", "M4", "M5", "M6", "M8", "M9"),
    groups={
        "M9": ("add_many", "contains_many", "contains_prefix", "remove_many"),
        "M5": ("remove", "clear", "length"),
        "M2": ("contains_at_expiry_of",),
        "M3": ("add_after_expiry_of",),
        "M6": (),
    },
    group_parameters={"M6": "max_entries"},
    choices={"eviction": ("birth", "lru")},
    constructor_clause="M1",
    name="metadata-cache",
    title="MetadataCache: hard-TTL positive cache (M2-M6, M8)",
    machine_module="spec.machines.metadata_cache",
    machine_function="metadata_cache_machine",
    spec_module="spec.metadata_cache",
    spec_class="MetadataCacheSpec",
    constructor=("ttl_seconds", "max_entries", "clock"),
    methods={
        "add": ("key",),
        "contains": ("key",),
        "remove": ("key",),
        "clear": (),
        "__len__": (),
        "stats": (),
        "check_invariants": (),
        "add_many": ("keys",),
        "contains_many": ("keys",),
        "contains_prefix": ("keys",),
        "remove_many": ("keys",),
    },
    required=("add", "contains"),
    classify=_classify_metadata,
    optional_parameters={"max_entries": "M6 bounded size: no max_entries parameter, unbounded runs only"},
    optional_methods={
        "remove": "M5 remove: no remove()",
        "clear": "M5 clear: no clear()",
        "__len__": "M5 len: no __len__ (the spec's answer stands in)",
        "stats": "M8 counters: no stats()",
        "add_many": "M9 add_many: no add_many()",
        "contains_many": "M9 contains_many: no contains_many()",
        "contains_prefix": "M9 contains_prefix: no contains_prefix()",
        "remove_many": "M9 remove_many: no remove_many()",
    },
    rules_for={
        "remove": ("remove",),
        "clear": ("clear",),
        "add_many": ("add_many",),
        "contains_many": ("contains_many",),
        "contains_prefix": ("contains_prefix",),
        "remove_many": ("remove_many",),
    },
    projections={"stats": Projection(_stats_impl, _stats_spec, "({r}.hits, {r}.misses, {r}.evictions)")},
    probe={"ttl_seconds": 1.0, "max_entries": None},
    probe_text="target(ttl_seconds, max_entries=..., clock=...)",
    mirrored=frozenset({"__len__"}),
)


def _touching(calls: list[Call]) -> list[str]:
    """The clauses of the calls that move beliefs in the LRU order, in the order they first appear."""
    named = {
        "contains": "E3",
        "contains_all": "E4",
        "covers_all": "E5",
        "invalidate_beyond": "E6",
        "clear": "E7",
    }
    return [named[c.method] for c in calls if c.method in named]


def _classify_existence(result: Replay, init: Mapping[str, Any]) -> list[str]:
    """Name the E clauses an existence-cache divergence implicates, the most specific first."""
    calls = result.calls
    last = calls[-1]
    if _bad_input(last):
        return ["B1"]
    found: list[str] = []
    if any(c.method == "covers_all" and _args(c).get("extra_cover") for c in calls):
        found.append("E5")
    if any(c.method == "invalidate_beyond" for c in calls):
        found.append("E6")
    capacity = int(init.get("max_entries", 0))
    added = {(_args(c)["pool"], h) for c in calls if c.method == "add" for h in _values(c, "hashes")}
    if capacity == 0:
        found.append("E1")
    own = {"contains": "E3", "contains_all": "E4", "covers_all": "E5", "__len__": "E7", "clear": "E7"}
    if last.method in own:
        found.append(own[last.method])
    found += _touching(calls)
    if len(added) > capacity or any(c.method == "add" for c in calls):
        found.append("E2")
    return list(dict.fromkeys(found)) or ["E2"]


def _values(call: Call, name: str) -> tuple[Any, ...]:
    value = dict(call.bound).get(name, ())
    return value.values if isinstance(value, OneShot) else tuple(value)


def _snapshot_impl(answer: Any) -> list[tuple[Any, ...]]:
    return [tuple(belief) for belief in answer]


def _snapshot_spec(model: Any) -> Any:
    return model.snapshot()


def _by_pool_impl(answer: Any) -> dict[Any, list[Any]]:
    from spec.existence_cache import by_pool

    return by_pool((pool, h) for pool, h in answer)


def _by_pool_spec(model: Any) -> dict[Any, list[Any]]:
    from spec.existence_cache import by_pool

    return by_pool(model.snapshot())


EXISTENCE_CACHE = Component(
    clauses=("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "B1"),
    groups={
        "B1": ("invalidate_beyond_with_negative_keep_pages",),
        "E3": ("contains",),
        "E4": ("contains_all", "contains_all_then_evict"),
        "E5": ("covers_all", "covers_all_without_extra_cover"),
        "E6": ("invalidate_beyond",),
        "E7": ("clear", "length"),
    },
    constructor_clause="E1",
    name="existence-cache",
    title="StorageExistenceCache: global LRU beliefs over (pool, hash) (E1-E8)",
    machine_module="spec.machines.existence_cache",
    machine_function="existence_cache_machine",
    spec_module="spec.existence_cache",
    spec_class="StorageExistenceCacheSpec",
    constructor=("max_entries",),
    methods={
        "add": ("pool", "hashes"),
        "contains": ("pool", "page_hash"),
        "contains_all": ("pool", "hashes"),
        "covers_all": ("pool", "hashes", "extra_cover"),
        "invalidate_beyond": ("pool", "hashes", "keep_pages"),
        "clear": (),
        "__len__": (),
        "snapshot": (),
        "check_invariants": (),
    },
    required=("add", "contains_all"),
    classify=_classify_existence,
    optional_methods={
        "contains": "E3 contains: no contains()",
        "covers_all": "E5 covers_all: no covers_all()",
        "invalidate_beyond": "E6 invalidate_beyond: no invalidate_beyond()",
        "clear": "E7 clear: no clear()",
        "__len__": "E7 len: no __len__ (the spec's answer stands in)",
        "snapshot": "LRU order: no snapshot(), only the answers are compared",
    },
    rules_for={
        "contains": ("contains",),
        "covers_all": ("covers_all", "covers_all_without_extra_cover"),
        "invalidate_beyond": ("invalidate_beyond", "invalidate_beyond_with_negative_keep_pages"),
        "clear": ("clear",),
    },
    projections={"snapshot": Projection(_snapshot_impl, _snapshot_spec, "[tuple(b) for b in {r}]")},
    choices={"bound": ("global", "per-pool")},
    # A bound per pool: only each pool's own order can be observed (no pool evicts another's beliefs).
    declared_projections={
        ("bound", "per-pool"): {
            "snapshot": Projection(
                _by_pool_impl, _by_pool_spec, "{{p: [h for q, h in {r} if q == p] for p, _ in {r}}}"
            )
        }
    },
    pooled=frozenset({"add", "contains", "contains_all", "covers_all", "invalidate_beyond"}),
    probe={"max_entries": 4},
    probe_text="target(max_entries)",
    mirrored=frozenset({"__len__", "snapshot"}),
)


_POOL_CLAUSES = {
    "add": "P2",
    "contains": "P2",
    "contains_all": "P2",
    "invalidate_beyond": "P2",
    "covered": "P4",
    "track_inflight": "P3",
    "untrack_inflight": "P3",
    "clear": "P5",
    "clear_inflight": "P5",
}
# Calls that answer with the state and change nothing.
_POOL_QUERIES = frozenset({"snapshot", "__len__", "check_invariants"})


def _pool_of(call: Call) -> Any:
    """The pool name a call acts on, or None for a call on the registry itself."""
    return dict(call.receiver[0][1]).get("name") if call.receiver else None


def _classify_pools(result: Replay, init: Mapping[str, Any]) -> list[str]:
    """Name the P clauses a pool-beliefs divergence implicates, the most specific first.

    The culprit is the diverging call when it answers wrong itself (``covered``: P4), else the last
    call that changed the state the diverging ``snapshot``/``len`` shows; a pool that disagrees though
    only other pools were touched is P1 (one pool per name).
    """
    calls = result.calls
    last = calls[-1]
    before = [c for c in calls[:-1] if c.method not in _POOL_QUERIES]
    if _bad_input(last):
        return ["B1"]
    found: list[str] = []
    pool = _pool_of(last)
    if last.receiver and before and all(_pool_of(c) not in (None, pool) for c in before):
        found.append("P1")
    if last.method not in _POOL_QUERIES and last.method in _POOL_CLAUSES:
        found.append(_POOL_CLAUSES[last.method])
    for call in reversed(before):
        if call.method in _POOL_CLAUSES:
            found.append(_POOL_CLAUSES[call.method])
            if not call.receiver:
                found.append("P1")  # the registry's clear / clear_inflight apply to every pool
            break
    methods = {c.method for c in calls}
    if methods & {"track_inflight", "untrack_inflight"}:
        found.append("P3")
    if "covered" in methods:
        found.append("P4")
    if methods & {"clear", "clear_inflight"}:
        found.append("P5")
    if len({_pool_of(c) for c in calls} - {None}) > 1:
        found.append("P1")
    found.append("P2")
    return list(dict.fromkeys(found))


def _pool_snapshot_impl(answer: Any) -> tuple[list[Any], dict[Any, int]]:
    beliefs, inflight = answer
    return (list(beliefs), dict(inflight))


POOL_BELIEFS = Component(
    clauses=("P1", "P2", "P3", "P4", "P5", "B1"),
    groups={
        "B1": ("invalidate_beyond_with_negative_keep_pages",),
        "P3": ("untrack_inflight", "two_writes_of_a_page_then_one_ack"),
        "P4": ("covered",),
        "P5": (
            "clear_pool",
            "clear_pool_inflight",
            "clear_registry",
            "clear_registry_inflight",
            "clear_pool_with_a_write_in_flight",
            "clear_registry_with_a_write_in_flight",
        ),
    },
    constructor_clause="P1",
    name="pool-beliefs",
    title="PooledExistenceCache / PoolExistenceBeliefs: per-pool beliefs with in-flight refs (P1-P5)",
    machine_module="spec.machines.pool_beliefs",
    machine_function="pool_beliefs_machine",
    spec_module="spec.pool_beliefs",
    spec_class="PooledExistenceCacheSpec",
    constructor=("max_entries",),
    methods={
        "pool": ("name",),
        "add": ("hashes",),
        "contains": ("page_hash",),
        "contains_all": ("hashes",),
        "covered": ("hashes",),
        "track_inflight": ("hashes",),
        "untrack_inflight": ("hashes",),
        "invalidate_beyond": ("hashes", "keep_pages"),
        "clear": (),
        "clear_inflight": (),
        "__len__": (),
        "snapshot": (),
        "check_invariants": (),
    },
    required=("add", "contains_all"),
    classify=_classify_pools,
    # Checked on a pool (``clear`` and ``clear_inflight`` too: a per-pool class gets the oracle's registry).
    optional_methods={
        "contains": "P2 contains: no contains()",
        "covered": "P4 covered: no covered()",
        "track_inflight": "P3/P4 in-flight references: no track_inflight()",
        "untrack_inflight": "P3 untrack: no untrack_inflight()",
        "invalidate_beyond": "P2 invalidate_beyond: no invalidate_beyond()",
        "clear": "P5 clear: no clear()",
        "clear_inflight": "P5 clear_inflight: no clear_inflight()",
        "__len__": "P2 len: no __len__ (the spec's answer stands in)",
        "snapshot": "LRU order and reference counts: no snapshot(), only the answers are compared",
    },
    rules_for={
        "contains": ("contains",),
        "covered": (
            "covered",
            "two_writes_of_a_page_then_one_ack",
            "clear_pool_with_a_write_in_flight",
            "clear_registry_with_a_write_in_flight",
        ),
        "track_inflight": (
            "track_inflight",
            "untrack_inflight",
            "clear_pool_inflight",
            "clear_registry_inflight",
            "two_writes_of_a_page_then_one_ack",
            "clear_pool_with_a_write_in_flight",
            "clear_registry_with_a_write_in_flight",
        ),
        "untrack_inflight": ("untrack_inflight", "two_writes_of_a_page_then_one_ack"),
        "invalidate_beyond": ("invalidate_beyond", "invalidate_beyond_with_negative_keep_pages"),
        "clear": (
            "clear_pool",
            "clear_registry",
            "clear_pool_with_a_write_in_flight",
            "clear_registry_with_a_write_in_flight",
        ),
        "clear_inflight": ("clear_pool_inflight", "clear_registry_inflight"),
        "registry clear": ("clear_registry", "clear_registry_with_a_write_in_flight"),
        "registry clear_inflight": ("clear_registry_inflight",),
    },
    registry_methods={
        "clear": "P5 registry clear: the registry has no clear() (its pools' clear() is checked)",
        "clear_inflight": "P5 registry clear_inflight: the registry has no clear_inflight() (its pools' is)",
    },
    projections={
        "snapshot": Projection(_pool_snapshot_impl, _snapshot_spec, "(list({r}[0]), dict({r}[1]))"),
    },
    probe={"max_entries": 4},
    probe_text="target(max_entries), a registry with pool(name) or a per-pool class",
    child="pool",
    child_methods=frozenset(
        {
            "add",
            "contains",
            "contains_all",
            "covered",
            "track_inflight",
            "untrack_inflight",
            "invalidate_beyond",
            "clear",
            "clear_inflight",
            "__len__",
            "snapshot",
        }
    ),
    mirrored=frozenset({"__len__", "snapshot"}),
)


def _no_replay(result: Replay, init: Mapping[str, Any]) -> list[str]:
    return []


def _evictor_probe() -> dict[str, Any]:
    from spec.fake_fs import FakeFileSystem

    fs = FakeFileSystem(FakeClock(0.0))
    fs.mkdir("/probe")
    return {
        "directory": "/probe",
        "max_size": 10,
        "min_free_space": 0,
        "eviction_ratio": 1.0,
        "on_evict": lambda key: None,
        "fs": fs,
    }


# SEMANTICS V's interface (O4): a factory(directory, *, max_size, min_free_space, eviction_ratio, on_evict)
# whose evictor calls os itself (interposed) or takes fs (injected); discard, evict, snapshot, total optional.
FILE_EVICTOR = Component(
    constructor_clause="V1",
    name="file-evictor",
    title="LRU file evictor on a fake filesystem (V1-V6, S7, C3)",
    machine_module="spec.machines.file_evictor",
    machine_function="file_evictor_machine",
    spec_module="spec.file_store",
    spec_class="FileStoreModel",
    constructor=("directory", "max_size", "min_free_space", "eviction_ratio", "on_evict", "fs"),
    methods={
        "reserve": ("key", "nbytes"),
        "commit": ("key",),
        "abort": ("key",),
        "touch": ("key",),
        "discard": ("key",),
        "evict": (),
        "clear": (),
        "snapshot": (),
        "check_invariants": (),
    },
    required=("reserve", "commit", "abort", "touch", "clear"),
    optional_methods={
        "discard": "discard: no discard() (V4 is checked through the other operations)",
        "evict": "evict: no evict() (V3 is checked through reserve)",
        "snapshot": "snapshot: no snapshot(), so entries are not compared (V2 is checked through answers, "
        "callbacks and the directory)",
    },
    rules_for={"discard": ("discard",), "evict": ("evict",)},
    clauses=("V1", "V2", "V3", "V4", "V5", "V6", "S7", "C3"),
    # O2: V6 and S7 are checked in every eviction (the machine consults its set_aside); V5's rules are
    # the files that vanish or cannot be removed.
    groups={
        "V5": (
            "file_becomes_unremovable",
            "another_process_deletes",
            "heal",
            "evict_past_an_unremovable_file",
            "evict_a_file_that_vanished",
        ),
        "V6": (),
        "S7": (),
        "V3": (),  # the victims eviction picks (the machine consults set_aside; answers are still compared)
    },
    choices={
        "commit": ("mru", "stays"),
        "clear": ("keeps-in-flight", "forgets-all"),
        "own": ("excluded", "counted"),
        "writers": ("counted", "one"),
    },
    wrap="project_factory",
    depends={"V5": ("S7",)},
    classify=_no_replay,
    probe=_evictor_probe,
    rule_clauses={
        "reserve": "V3",
        "write": "V3",
        "evict": "V3",
        "publish": "V4",
        "commit": "V4",
        "abort": "V4",
        "touch": "V4",
        "discard": "V4",
        "clear": "V6",
        "another_process_deletes": "V5",
        "file_becomes_unremovable": "V5",
        "heal": "V5",
        "evict_past_an_unremovable_file": "V5",
        "evict_a_file_that_vanished": "V5",
        "other_files_take_disk_space": "V3",
    },
    probe_text="target(directory, max_size=, min_free_space=, eviction_ratio=, on_evict=)",
    replayable=False,
)


def _store_probe() -> dict[str, Any]:
    from spec.fake_fs import FakeFileSystem

    return {
        "storage_dir": "/probe",
        "namespace": "",
        "extra_config": {},
        "fs": FakeFileSystem(FakeClock(0.0)),
    }


FILE_STORE = Component(
    constructor_clause="F9",
    name="file-store",
    title="HiCacheFile on a fake filesystem with faults, restarts and crashes (F1-F8, V1-V6, C1-C4, S3)",
    machine_module="spec.machines.file_store",
    machine_function="file_store_machine",
    spec_module="spec.file_store",
    spec_class="FileStoreModel",
    constructor=("storage_dir", "namespace", "extra_config", "fs", "clock"),
    methods={
        "set": ("key", "value"),
        "get": ("key",),
        "get_into": ("key", "buffer"),
        "exists": ("key",),
        "batch_set": ("keys", "values"),
        "batch_get": ("keys",),
        "batch_exists": ("keys",),
        "delete": ("key",),
        "clear": (),
        "check_invariants": (),
    },
    required=("set", "get", "get_into", "exists", "batch_set", "delete", "clear"),
    classify=_no_replay,
    optional_methods={
        "batch_get": "F5 batch_get: no batch_get()",
        "batch_exists": "F5 batch_exists: no batch_exists()",
    },
    rules_for={"batch_get": ("batch_get",), "batch_exists": ("batch_exists",)},
    probe=_store_probe,
    rule_clauses={
        "set": "F3",
        "batch_set": "F5",
        "write_every_key": "F3",
        "get": "F4",
        "get_into": "F4",
        "batch_get": "F5",
        "exists": "F6",
        "batch_exists": "F5",
        "delete": "F7",
        "clear": "F7",
        "another_process_deletes": "C2",
        "revisit_a_vanished_file": "F4",
        "another_process_writes": "F1",
        "another_user_plants_a_node": "S3",
        "another_writer_leaves_a_temp_file": "F8",
        "fault": "B2",
        "file_becomes_unremovable": "V5",
        "evict_a_file_that_vanished": "V6",
        "evict_past_an_unremovable_file": "V5",
        "heal": "V5",
        "advance": "C2",
        "restart": "F8",
        "crash_during_set": "C4",
        "crash_during_removal": "C4",
        "crash_during_start_up": "C4",
    },
    probe_text="target(storage_dir, namespace=..., extra_config=..., fs=..., clock=...)",
    replayable=False,
)

COMPONENTS: dict[str, Component] = {
    c.name: c for c in (METADATA_CACHE, EXISTENCE_CACHE, POOL_BELIEFS, FILE_EVICTOR, FILE_STORE)
}


def available_components() -> dict[str, bool]:
    """Each component and whether its machine module is importable in this tree."""
    out = {}
    for name, component in COMPONENTS.items():
        try:
            component.machine()
            out[name] = True
        except (ImportError, AttributeError):
            out[name] = False
    return out
