"""The oracle's catalogue: every deliberately wrong variant it must catch, every correct one it must pass.

Wrong and correct variants come from ``spec/variants/`` (every registry of each
component's module), each with the clause its mistake breaks; ``ALSO_NAMED`` lists the
other clauses a mistake breaks, one of which the oracle may name first (for a file store
often the consequence, e.g. a directory mismatch).  The clauses are named here, in one
table, not read from the variants' docstrings.

``SEEDS`` gives the variants that seed 0 finds only after hundreds of examples a seed
that finds them in a few seconds, so ``make test`` runs every variant; ``SLOW`` (empty
now) would list those that still take too long: they run under the ``verify``
Hypothesis profile (``make verify``) only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import spec.variants.existence_cache as variants_e
import spec.variants.file_evictor as variants_f
import spec.variants.file_store as variants_s
import spec.variants.metadata_cache as variants_m
import spec.variants.pool_beliefs as variants_p
from benchmarks.bench_existence_cache import TextbookExistenceCache, TextbookPoolBeliefs
from benchmarks.bench_metadata_cache import PlainTTLSet
from hicache import (
    HiCacheFile,
    MetadataCache,
    PooledExistenceCache,
    PoolExistenceBeliefs,
    StorageExistenceCache,
)
from hicache.file_evictor import LRUFileEvictor
from spec.models.existence_cache import StorageExistenceCacheSpec
from spec.models.metadata_cache import MetadataCacheSpec
from spec.models.pool_beliefs import PooledExistenceCacheSpec
from spec.oracle._result import Failure

__all__ = [
    "ALSO_NAMED",
    "CORRECT",
    "NAMED_FIRST_BY_PROVENANCE",
    "SEEDS",
    "SLOW",
    "WRONG",
    "Variant",
    "named_first",
]


class Variant(NamedTuple):
    component: str
    name: str
    target: Callable[..., Any]
    clause: str
    declare: tuple[tuple[str, str], ...] = ()  # O3: the choices it is checked under (--declare)
    # O3: the groups it leaves out by design (--leave-out): B1 for a class that does not validate its input
    leave_out: tuple[str, ...] = ()


BACKGROUND = (("eviction", "background"),)  # V3-bg: the evictor evicts in the background
# The benchmarks' baselines (the plainest code anyone would write) validate nothing: B1 left out (O3).
NO_VALIDATION = ("B1",)


def metadata_cache_with_counters(ttl_seconds: float, **kwargs: Any) -> MetadataCache:
    """Production with the M8 counters on, as a factory target (the oracle passes ``stats=True`` itself to a
    constructor that takes it, by name or through ``**kwargs``)."""
    return MetadataCache(ttl_seconds, **{"stats": True, **kwargs})


# component -> its registries of wrong variants, name -> (variant, clause)
_REGISTRIES: dict[str, list[Mapping[str, tuple[Callable[..., Any], str]]]] = {
    "metadata-cache": [variants_m.WRONG, variants_m.WRONG_PRODUCTION],
    "existence-cache": [variants_e.WRONG, variants_e.WRONG_MODEL],
    "pool-beliefs": [variants_p.WRONG, variants_p.WRONG_MODEL],
    "file-evictor": [variants_f.WRONG, variants_f.WRONG_PRODUCTION],
    # the store's RACES are races between threads: tests/concurrency, not a sequential machine
    "file-store": [{f"store: {n}": v for n, v in variants_s.WRONG.items()}],
}

_STORE_BACKGROUND = variants_s.WRONG_BACKGROUND.items()

WRONG: list[Variant] = [
    *(
        Variant(component, n, c, clause)
        for component, registries in _REGISTRIES.items()
        for registry in registries
        for n, (c, clause) in registry.items()
    ),
    # The benchmark's speed floor for contains() (benchmarks/bench_metadata_cache.py), not a correct cache.
    Variant("metadata-cache", "benchmark PlainTTLSet", PlainTTLSet, "M3", leave_out=NO_VALIDATION),
    # V3-bg's mistakes, with eviction=background declared; and a correct background evictor undeclared
    *(Variant("file-evictor", n, c, k, BACKGROUND) for n, (c, k) in variants_f.WRONG_BACKGROUND.items()),
    *(Variant("file-store", f"store: {n}", c, k, BACKGROUND) for n, (c, k) in _STORE_BACKGROUND),
    Variant("file-evictor", "BackgroundEvictor, undeclared", variants_f.BackgroundEvictor, "V3"),
    Variant("file-store", "store: BackgroundStore, undeclared", variants_s.BackgroundStore, "V3"),
]

CORRECT: list[Variant] = [
    Variant("metadata-cache", "spec", MetadataCacheSpec, "M4"),
    Variant("metadata-cache", "production", MetadataCache, "M4"),
    Variant("metadata-cache", "production with counters", metadata_cache_with_counters, "M8"),
    *(Variant("metadata-cache", n, c, "M4") for n, c in variants_m.CORRECT.items()),
    Variant("existence-cache", "spec", StorageExistenceCacheSpec, "E2"),
    Variant("existence-cache", "production", StorageExistenceCache, "E2"),
    *(Variant("existence-cache", n, c, "E2") for n, c in variants_e.CORRECT.items()),
    Variant("existence-cache", "benchmark textbook", TextbookExistenceCache, "E4", leave_out=NO_VALIDATION),
    Variant("pool-beliefs", "spec", PooledExistenceCacheSpec, "P2"),
    Variant("pool-beliefs", "production registry", PooledExistenceCache, "P2"),
    Variant("pool-beliefs", "production per-pool class", PoolExistenceBeliefs, "P2"),
    *(Variant("pool-beliefs", n, c, "P2") for n, c in variants_p.CORRECT.items()),
    Variant(
        "pool-beliefs",
        "benchmark textbook per-pool class",
        TextbookPoolBeliefs,
        "P4",
        leave_out=NO_VALIDATION,
    ),
    Variant("file-evictor", "production", LRUFileEvictor, "V3"),
    # SEMANTICS V's interface, calling os itself: the oracle interposes its fake filesystem (O4)
    *(Variant("file-evictor", n, c, "V3") for n, c in variants_f.CORRECT.items()),
    Variant("file-store", "production", HiCacheFile, "F3"),
    # V3-bg, declared: evicting in the background between two watermarks
    *(Variant("file-evictor", n, c, "V3-bg", BACKGROUND) for n, c in variants_f.CORRECT_BACKGROUND.items()),
    *(Variant("file-store", n, c, "V3-bg", BACKGROUND) for n, c in variants_s.CORRECT_BACKGROUND.items()),
]

# The other clauses a variant's mistake breaks, besides its registry's clause: the oracle may name any of
# them first, whichever the shortest counterexample shows.  The first ones of an entry are those its
# author names in its docstring ("P1, P5: ...", "V4/C3 broken: ..."), then the consequences.
ALSO_NAMED: dict[str, frozenset[str]] = {
    "SharedBeliefsRegistry": frozenset({"P2"}),
    "RegistryClearSkipsInflight": frozenset({"P5"}),
    "DiscardDropsWritesInFlight": frozenset({"V5"}),
    "capacity not refunded on abort": frozenset({"C3"}),
    "store: capacity not refunded on abort": frozenset({"C3"}),
    "store: capacity not refunded when a file vanished": frozenset({"C3"}),
    # re-adding a live key restarts its life and moves it to the young end (M3), so a full cache evicts
    # another key first (M6): with the rule that fills the cache, that is the shorter counterexample
    "RefreshOnReAdd": frozenset({"M6"}),
    # reads the chain twice (E8), and on a miss touches nothing of the believed prefix (E4)
    "ContainsAllReadsTheChainTwice": frozenset({"E4"}),
    # re-adds an expired key by rewriting its birth in place (M3), so the bound evicts a fresh key (M6)
    "ReAddKeepsPosition": frozenset({"M3"}),
    # slides the lifetime on re-add (M3), and a ttl of -1 expires at once instead of never (M2), so
    # contains answers False for a live key (M4: the clause the machine names for a wrong liveness)
    "benchmark PlainTTLSet": frozenset({"M2", "M4"}),
    # a negative keep_pages is bad input: the oracle names B1 alone for it (O2's B1 group)
    "NegativeKeepPagesSlicesFromTheEnd": frozenset({"B1"}),
    # takes a TTL of 0 for "never expires" (M2), so contains answers True for an expired key (M4) and
    # len() counts it (M5)
    "ZeroTtlNeverExpires": frozenset({"M4", "M5"}),
    # the bound applied only by len(): every query before it answers from beliefs the bound dropped
    "TrimmedInLen": frozenset({"E3", "E4", "E5", "P4"}),
    # ends every write of the key at the first commit (writers = 0), so a second write still in flight
    # loses its mark (V2, V5) besides keeping the reservation's recency (V4)
    "CommitKeepsReservationOrder": frozenset({"V2", "V5"}),
    # V3-bg's pass takes a write in flight (V5): its entry is gone from the evictor's entries (V2)
    "PassEvictsWritesInFlight": frozenset({"V2"}),
    # F8 (its author's); takes "e%5Fx_ns.bin" for the key "e%5Fx" (F1), so clear() leaves that file of
    # ours behind (F7), and the evictor's total counts another namespace's bytes (C3)
    "store: start-up scan counts other namespaces' files": frozenset({"F8", "F7", "C3"}),
    # stops at the first unremovable victim (V5), so the victims after it keep the beliefs the model's
    # on_evict calls dropped: the first difference seen may be a belief (C1)
    "store: eviction wedged on EPERM": frozenset({"C1"}),
    # takes "b_x_ns.bin" for one of ours (F1), so its bytes are counted (C3)
    "store: namespace taken as a plain suffix": frozenset({"C3"}),
    # acknowledges a set over a planted node (F3), in a batch too (F5), counts a planted node's bytes
    # (C3), also in the new store after a crash (C4)
    "store: any node taken for a page": frozenset({"F3", "F5", "C3", "C4"}),
    # C1, V3 (its author's); the belief of a victim whose file had vanished outlives it (V6, C1): the
    # store's answers to a batch of writes after it (F5), or a set that the belief answers without
    # writing, leaving the directory short of the value (F3), are where the shortest run shows it
    "store: callback skipped when the file is already gone": frozenset({"C1", "V3", "F5", "F3"}),
}

# O11 (issue 30): the variants whose first-named clause blame by provenance moved, to the clause of the rule
# that made the state their diverging answer reads.  Each was named M2 first (then M4: the contains that
# answered False, M3 only among the clauses it was consistent with); each keeps an expired entry's birth on
# a re-add, so its counterexample is consistent with M3's known wrong form, and M3 is named first, M2 and
# M4 next.  Their verdicts and counterexample lengths (3, 3, 3 and 5 calls at seed 0) are unchanged, and no
# other variant's blame has a provenance.
NAMED_FIRST_BY_PROVENANCE: dict[str, str] = {
    "StaleBirthOnReAdd": "M3",
    "LazyPurgeStaleBirth": "M3",
    "LenPurgesStaleBirth": "M3",
    "ReAddKeepsPosition": "M3",
}

# The seed of a variant that seed 0 finds only after hundreds of examples: none since the machines' rules
# that reach the sequences a defect needs (issue 11 item 6); every variant runs with seed 0.
SEEDS: dict[str, int] = {}

# Variants that take the machine more than a few seconds to find at seed 0 and 15 steps (100-400
# examples, measured): run under ``make verify`` only (and by test_default_budget.py there, at the default
# budget without a snapshot).
SLOW: frozenset[str] = frozenset({"CoveredStopsAtInflight", "InvalidateBeyondOffByOne"})


def named_first(failure: Failure) -> set[str]:
    """The clause a failure names first.  Without a snapshot() the blame is inferred (issue 23): the
    clause of the operation whose answer diverged, with the others the counterexample is consistent with
    listed; such a failure names each of them."""
    return {*failure.clauses[:1], *failure.consistent_with} if failure.inferred else set(failure.clauses[:1])
