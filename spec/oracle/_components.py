"""The components the oracle knows: which machine, which spec, which calls, which clauses.

Each component names the lock-step machine of the project's own tests (the
oracle runs that machine, never a copy), the spec class it replays against,
the spec-level interface (constructor and method parameters) and the groups a
target may leave out.  A divergence names its own clause: the machine's assertion begins with it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import PACKAGE
from ..models.existence_cache import by_pool
from ..world.clock import FakeClock
from ..world.filesystem import FakeFileSystem

if TYPE_CHECKING:  # the machines need Hypothesis; --describe and --list must not
    from ..machines._base import LockstepMachine

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
    machine_path: str  # package.module:Class, the project's machine (the oracle subclasses it)
    spec_path: str  # package.module:Class, the spec the replays run against
    constructor: tuple[str, ...]
    methods: Mapping[str, tuple[str, ...]]
    required: tuple[str, ...]
    optional_parameters: Mapping[str, str] = field(default_factory=dict)
    optional_methods: Mapping[str, str] = field(default_factory=dict)
    # The rules of an optional method, hidden while it is left out (default: the rule of the same name).
    rules_for: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    projections: Mapping[str, Projection] = field(default_factory=dict)
    pooled: frozenset[str] = frozenset()  # methods whose first argument is the pool (per-pool form)
    probe: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(default_factory=dict)
    probe_text: str = ""  # how the target is built, for the usage error when the probe fails
    replayable: bool = True  # False: the machine acts on a world beside the target (a fake filesystem)
    # Methods that are one instant (M9's batches): at most one clock reading each, in replays too.
    one_instant: frozenset[str] = frozenset()
    child: str | None = None  # the registry method that hands out per-pool objects
    child_methods: frozenset[str] = frozenset()  # methods of those per-pool objects
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
    # The methods a declared value needs the target to have: (choice, value) -> methods (V3-bg: a background
    # evictor's pass, ``evict``, which the machines run as a step of its own).
    declared_methods: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    # The clause a declared value checks in place of the default's: (choice, value) -> {clause: variant}
    # (V3-bg in place of V3), so that a report lists as passed what was checked.
    declared_clauses: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    # How answers are compared under a declared choice, where it differs: (choice, value) -> projections.
    declared_projections: Mapping[tuple[str, str], Mapping[str, Projection]] = field(default_factory=dict)
    # The project's own classes whose API differs from the component's: put behind its interface (a
    # function, package.module:name, target -> target; anything else is returned as it is).
    wrap: str = ""
    # Clauses that only the rules of another clause's group exercise: not checked (so not passed) while
    # that group is left out or set aside (S7's rest needs V5's unremovable files), O8.
    depends: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The clauses an answer of each method is checked against, the first the method's own: without a
    # snapshot() the oracle blames the first of the diverging call's, and lists those of every call of
    # the counterexample as the ones it is consistent with.  ``--describe`` prints them.
    method_clauses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Groups whose rules other clauses need too (V5's vanished files are V6's victims as well): once the
    # group's clause has failed, its rules go on running and only its divergences are set aside (an
    # example that meets one ends unreported), so that the clauses named here are still checked (O8).
    shared_rules: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The clauses only real threads can check (O6): "not checked (sequential run; use --threads)" in a
    # sequential run (O8).
    threads_clauses: tuple[str, ...] = ()
    # The clause of each machine rule outside the groups, for a machine that does not name the clause of
    # the step under way (``clause``): a call that does not return is a FAIL of its rule's clause (O8).
    rule_clauses: Mapping[str, str] = field(default_factory=dict)
    # M8: (the group, the method that answers the counters, the constructor parameter that turns them on).
    # A target with the method must count, from its first call, unless the group is left out (then the
    # method is hidden from the machine); one whose constructor takes the parameter is built with it True.
    counters: tuple[str, str, str] | None = None
    # B1 of the constructor: the bad settings to try (package.module:NAME, a tuple of BadSetting, in the
    # machine's module: the machines need Hypothesis, --describe must not) and the spec's refusal of the
    # constructor's arguments (package.module:function, called with those it takes by name).
    bad_settings: str = ""
    settings_spec: str = ""
    # O11, blame by provenance: the rules that make state, each by its clause, in their known wrong form
    # (package.module:Class, built as the spec is: M3's re-add that keeps an expired entry's birth, E3's
    # hit that does not refresh).  Without a snapshot(), a counterexample whose recorded answers such a
    # spec gives, every one, blames that rule's clause first, the answering operation's next.
    provenance: Mapping[str, str] = field(default_factory=dict)

    def checked_clauses(self, declared: Mapping[str, str]) -> tuple[str, ...]:
        """The clauses a run under the ``declared`` choices checks (O3: a declared variant in place of its
        clause)."""
        instead: dict[str, str] = {}
        for (name, value), clauses in self.declared_clauses.items():
            if declared.get(name) == value:
                instead.update(clauses)
        return tuple(instead.get(c, c) for c in self.clauses)

    def wrapped(self, target: Callable[..., Any]) -> Callable[..., Any]:
        return _load(self.wrap)(target) if self.wrap else target

    def machine(self) -> type[LockstepMachine]:
        """The machine class of the project's tests (raises ImportError until it exists)."""
        return _load(self.machine_path)  # type: ignore[return-value]

    def probe_arguments(self) -> dict[str, Any]:
        """Constructor arguments of the probe instance (fresh each time)."""
        return dict(self.probe() if callable(self.probe) else self.probe)

    def spec_factory(self) -> Callable[..., Any]:
        return _load(self.spec_path)

    def wrong_form(self, clause: str) -> Callable[..., Any]:
        """O11: the spec with ``clause``'s rule in its known wrong form (built as the spec is)."""
        return _load(self.provenance[clause])


def _load(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def _stats(counters: Any) -> tuple[int, int, int]:
    """The M8 counters of a target's ``stats()`` answer, and of the spec itself."""
    return (counters.hits, counters.misses, counters.evictions)


def _snapshot_impl(answer: Any) -> list[tuple[Any, ...]]:
    return [tuple(belief) for belief in answer]


def _live_births(model: Any) -> list[tuple[Any, ...]]:
    """The machine's refinement mapping of a metadata cache: live keys and births, in eviction order."""
    return list(model.live().items())


_BATCHES = ("add_many", "contains_many", "contains_prefix", "remove_many")  # M9; each is a rule too


METADATA_CACHE = Component(
    clauses=("M2", "M3", "M4", "M5", "M6", "M8", "M9", "B1"),
    threads_clauses=("M7",),
    rule_clauses={
        "build": "M1",
        "add": "M3",
        "contains": "M4",
        "contains_every_key": "M4",
        "fill": "M6",
        "hit_the_next_victim_then_evict": "M6",
        "hit_midlife_then_ask_after_expiry": "M2",
        "advance_to_expiry_of": "M2",
    },
    groups={
        "M9": _BATCHES,
        "M5": ("remove", "clear", "length"),
        "M2": ("contains_at_expiry_of",),
        "M3": ("add_after_expiry_of",),
        "M6": (),
        "M8": (),
        "B1": ("bad_input",),
    },
    counters=("M8", "stats", "stats"),
    group_parameters={"M6": "max_entries"},
    one_instant=frozenset(_BATCHES),
    choices={"eviction": ("birth", "lru")},
    constructor_clause="M1",
    name="metadata-cache",
    machine_path=f"{PACKAGE}.machines.metadata_cache:MetadataCacheMachine",
    spec_path=f"{PACKAGE}.models.metadata_cache:MetadataCacheSpec",
    constructor=("ttl_seconds", "max_entries", "clock"),
    methods={
        "add": ("key",),
        "contains": ("key",),
        "remove": ("key",),
        "clear": (),
        "__len__": (),
        "stats": (),
        "snapshot": (),
        "check_invariants": (),
        **dict.fromkeys(_BATCHES, ("keys",)),
    },
    required=("add", "contains"),
    optional_parameters={"max_entries": "M6 bounded size: no max_entries parameter, unbounded runs only"},
    optional_methods={
        "remove": "M5 remove: no remove()",
        "clear": "M5 clear: no clear()",
        "__len__": "M5 len: no __len__",
        "stats": "M8 counters: no stats()",
        "snapshot": "births: no snapshot(), only the answers are compared",
        **{method: f"M9 {method}: no {method}()" for method in _BATCHES},
    },
    rules_for={"__len__": ("length",)},
    method_clauses={
        "add": ("M3", "M2", "M6"),
        "contains": ("M4", "M2"),
        "remove": ("M5",),
        "clear": ("M5",),
        "__len__": ("M5", "M2"),
        "stats": ("M8",),
        "add_many": ("M9", "M3", "M2", "M6"),
        "contains_many": ("M9", "M4", "M2"),
        "contains_prefix": ("M9", "M4", "M2"),
        "remove_many": ("M9", "M5"),
    },
    projections={
        "stats": Projection(_stats, _stats, "({r}.hits, {r}.misses, {r}.evictions)"),
        "snapshot": Projection(_snapshot_impl, _live_births, "[tuple(e) for e in {r}]"),
    },
    probe={"ttl_seconds": 1.0, "max_entries": None},
    probe_text="target(ttl_seconds, max_entries=..., clock=...)",
    bad_settings=f"{PACKAGE}.machines.metadata_cache:BAD_SETTINGS",
    settings_spec=f"{PACKAGE}.models.metadata_cache:refuse_bad_settings",
    provenance={"M3": f"{PACKAGE}.models.metadata_cache:StaleBirthKeptOnReAdd"},
)


def _snapshot_spec(model: Any) -> Any:
    return model.snapshot()


def _by_pool_spec(model: Any) -> dict[Any, list[Any]]:
    return by_pool(model.snapshot())


EXISTENCE_CACHE = Component(
    clauses=("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "B1"),
    groups={
        "B1": ("invalidate_beyond_with_negative_keep_pages", "bad_input"),
        "E3": ("contains",),
        "E4": ("contains_all", "contains_all_then_evict"),
        "E5": ("covers_all", "covers_all_without_extra_cover"),
        "E6": ("invalidate_beyond",),
        "E7": ("clear", "length"),
    },
    constructor_clause="E1",
    name="existence-cache",
    machine_path=f"{PACKAGE}.machines.existence_cache:StorageExistenceCacheMachine",
    spec_path=f"{PACKAGE}.models.existence_cache:StorageExistenceCacheSpec",
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
    optional_methods={
        "contains": "E3 contains: no contains()",
        "covers_all": "E5 covers_all: no covers_all()",
        "invalidate_beyond": "E6 invalidate_beyond: no invalidate_beyond()",
        "clear": "E7 clear: no clear()",
        "__len__": "E7 len: no __len__",
        "snapshot": "LRU order: no snapshot(), only the answers are compared",
    },
    rules_for={
        "__len__": ("length",),
        "covers_all": ("covers_all", "covers_all_without_extra_cover"),
        "invalidate_beyond": ("invalidate_beyond", "invalidate_beyond_with_negative_keep_pages"),
    },
    method_clauses={
        "add": ("E2", "E8"),
        "contains": ("E3",),
        "contains_all": ("E4", "E8"),
        "covers_all": ("E5", "E8"),
        "invalidate_beyond": ("E6", "B1"),
        "clear": ("E7",),
        "__len__": ("E7",),
    },
    projections={"snapshot": Projection(_snapshot_impl, _snapshot_spec, "[tuple(b) for b in {r}]")},
    choices={"bound": ("global", "per-pool")},
    # A bound per pool: only each pool's own order can be observed (no pool evicts another's beliefs).
    declared_projections={
        ("bound", "per-pool"): {
            "snapshot": Projection(
                by_pool, _by_pool_spec, "{{p: [h for q, h in {r} if q == p] for p, _ in {r}}}"
            )
        }
    },
    pooled=frozenset({"add", "contains", "contains_all", "covers_all", "invalidate_beyond"}),
    probe={"max_entries": 4},
    probe_text="target(max_entries)",
    bad_settings=f"{PACKAGE}.machines.existence_cache:BAD_SETTINGS",
    settings_spec=f"{PACKAGE}.models.existence_cache:refuse_bad_capacity",
    provenance={"E3": f"{PACKAGE}.models.existence_cache:ContainsWithoutRefresh"},
)


def _pool_snapshot_impl(answer: Any) -> tuple[list[Any], dict[Any, int]]:
    beliefs, inflight = answer
    return (list(beliefs), dict(inflight))


_POOL_METHODS = {
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
}

# The pool machine's rules that several left-out methods share.
_TWO_WRITES = "two_writes_of_a_page_then_one_ack"
_INFLIGHT_CLEARS = ("clear_pool_inflight", "clear_registry_inflight")
_CLEARS_MID_WRITE = ("clear_pool_with_a_write_in_flight", "clear_registry_with_a_write_in_flight")
_MID_WRITE = (_TWO_WRITES, *_CLEARS_MID_WRITE)  # the rules with a write in flight

POOL_BELIEFS = Component(
    clauses=("P1", "P2", "P3", "P4", "P5", "B1"),
    groups={
        "B1": ("invalidate_beyond_with_negative_keep_pages", "bad_input"),
        "P3": ("untrack_inflight", _TWO_WRITES),
        "P4": ("covered",),
        "P5": ("clear_pool", "clear_registry", *_INFLIGHT_CLEARS, *_CLEARS_MID_WRITE),
    },
    constructor_clause="P1",
    name="pool-beliefs",
    machine_path=f"{PACKAGE}.machines.pool_beliefs:PoolBeliefsMachine",
    spec_path=f"{PACKAGE}.models.pool_beliefs:PooledExistenceCacheSpec",
    constructor=("max_entries",),
    methods=_POOL_METHODS,
    required=("add", "contains_all"),
    # Checked on a pool (``clear`` and ``clear_inflight`` too: a per-pool class gets the oracle's registry).
    optional_methods={
        "contains": "P2 contains: no contains()",
        "covered": "P4 covered: no covered()",
        "track_inflight": "P3/P4 in-flight references: no track_inflight()",
        "untrack_inflight": "P3 untrack: no untrack_inflight()",
        "invalidate_beyond": "P2 invalidate_beyond: no invalidate_beyond()",
        "clear": "P5 clear: no clear()",
        "clear_inflight": "P5 clear_inflight: no clear_inflight()",
        "__len__": "P2 len: no __len__",
        "snapshot": "LRU order and reference counts: no snapshot(), only the answers are compared",
    },
    rules_for={
        "__len__": ("length",),
        "covered": ("covered", *_MID_WRITE),
        "track_inflight": ("track_inflight", "untrack_inflight", *_INFLIGHT_CLEARS, *_MID_WRITE),
        "untrack_inflight": ("untrack_inflight", _TWO_WRITES),
        "invalidate_beyond": ("invalidate_beyond", "invalidate_beyond_with_negative_keep_pages"),
        "clear": ("clear_pool", "clear_registry", *_CLEARS_MID_WRITE),
        "clear_inflight": _INFLIGHT_CLEARS,
        "registry clear": ("clear_registry", "clear_registry_with_a_write_in_flight"),
        "registry clear_inflight": ("clear_registry_inflight",),
    },
    method_clauses={
        "pool": ("P1",),
        "add": ("P2",),
        "contains": ("P2",),
        "contains_all": ("P2",),
        "covered": ("P4",),
        "track_inflight": ("P3", "P4"),
        "untrack_inflight": ("P3",),
        "invalidate_beyond": ("P2", "B1"),
        "clear": ("P5",),
        "clear_inflight": ("P5",),
        "__len__": ("P2",),
    },
    registry_methods={
        "clear": "P5 registry clear: the registry has no clear() (its pools' clear() is checked)",
        "clear_inflight": "P5 registry clear_inflight: the registry has no clear_inflight() (its pools' is)",
    },
    projections={"snapshot": Projection(_pool_snapshot_impl, _snapshot_spec, "(list({r}[0]), dict({r}[1]))")},
    probe={"max_entries": 4},
    probe_text="target(max_entries), a registry with pool(name) or a per-pool class",
    bad_settings=f"{PACKAGE}.machines.pool_beliefs:BAD_SETTINGS",
    settings_spec=f"{PACKAGE}.models.existence_cache:refuse_bad_capacity",
    provenance={"P2": f"{PACKAGE}.models.pool_beliefs:PooledContainsWithoutRefresh"},
    child="pool",
    child_methods=frozenset(_POOL_METHODS) - {"pool", "check_invariants"},  # the registry's own
)


def _evictor_probe() -> dict[str, Any]:
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
    machine_path=f"{PACKAGE}.machines.file_evictor:FileEvictorMachine",
    spec_path=f"{PACKAGE}.models.file_store:FileStoreModel",
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
    clauses=("V1", "V2", "V3", "V4", "V5", "V6", "S7", "C3", "B1"),
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
        "V3-bg": (),  # the same under eviction=background: a pass's victims
        "B1": ("bad_input",),
    },
    choices={
        "commit": ("mru", "stays"),
        "clear": ("keeps-in-flight", "forgets-all"),
        "own": ("excluded", "counted"),
        "writers": ("counted", "one"),
        "eviction": ("inline", "background"),  # V3, V3-bg
    },
    declared_methods={("eviction", "background"): ("evict",)},
    declared_clauses={("eviction", "background"): {"V3": "V3-bg"}},
    wrap=f"{PACKAGE}.machines.file_evictor:project_factory",
    depends={"V5": ("S7",)},
    # V5's vanished files are V6's victims too (a callback for a victim already gone).  S7 stays in
    # ``depends``: its checks need V5's unremovable files in examples that V5's divergences now end.
    shared_rules={"V5": ("V6",)},
    probe=_evictor_probe,
    probe_text="target(directory, max_size=, min_free_space=, eviction_ratio=, on_evict=)",
    replayable=False,
    bad_settings=f"{PACKAGE}.machines.file_evictor:BAD_SETTINGS",
    settings_spec=f"{PACKAGE}.models.file_evictor:refuse_bad_limits",
)


def _store_probe() -> dict[str, Any]:
    return {
        "storage_dir": "/probe",
        "namespace": "",
        "extra_config": {},
        "fs": FakeFileSystem(FakeClock(0.0)),
    }


FILE_STORE = Component(
    constructor_clause="F9",
    threads_clauses=("C5",),
    # What the store's machine compares (F2's refusals are B1's); V3 is V3-bg's under eviction=background.
    clauses=(
        "F1",
        "F3",
        "F4",
        "F5",
        "F6",
        "F7",
        "F8",
        "F9",
        "V1",
        "V2",
        "V3",
        "V4",
        "V5",
        "V6",
        "C1",
        "C2",
        "C3",
        "C4",
        "S3",
        "S6",
        "B2",
        "B1",
    ),
    # O2: after F4 fails, the reads into buffers of another size stop (get_into); after V5, the files that
    # cannot be removed; after S3, the nodes another user plants: each set aside, the search goes on for
    # the store's other clauses.
    groups={
        "B1": ("bad_input",),
        "F4": ("get_into",),
        "V5": ("file_becomes_unremovable", "evict_past_an_unremovable_file"),
        "S3": ("another_user_plants_a_node",),
    },
    declared_clauses={("eviction", "background"): {"V3": "V3-bg"}},
    bad_settings=f"{PACKAGE}.machines.file_store:BAD_SETTINGS",
    settings_spec=f"{PACKAGE}.models.refusals:refuse_bad_settings",
    name="file-store",
    machine_path=f"{PACKAGE}.machines.file_store:FileStoreMachine",
    spec_path=f"{PACKAGE}.models.file_store:FileStoreModel",
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
        "evict": (),
        "check_invariants": (),
    },
    required=("set", "get", "get_into", "exists", "batch_set", "delete", "clear"),
    # V3-bg: a store whose evictor runs in the background declares it; the machine then runs the passes
    # (the store's evict(), a step) after a burst of writes and when time passes.
    choices={"eviction": ("inline", "background")},
    declared_methods={("eviction", "background"): ("evict",)},
    optional_methods={
        "batch_get": "F5 batch_get: no batch_get()",
        "batch_exists": "F5 batch_exists: no batch_exists()",
    },
    probe=_store_probe,
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
