"""The oracle's catalogue: every deliberately wrong variant it must catch, every correct one it must pass.

Wrong variants come from ``spec/oracle/variants/`` (optimization mistakes written
for the oracle) and ``tests/variants/`` (the component machines' own catalogue),
each with the clause its mistake breaks (for the file components, the clauses the
variant's author names: the oracle names the clauses of the machine's message and
steps, which for a file store are often the consequence, e.g. a directory mismatch).

``SLOW`` lists the variants whose mistake takes the machine hundreds of examples
to stumble on (measured with seed 0, 15 steps; the count varies with the process,
see spec/oracle/__init__.py on determinism): they run under the ``verify``
Hypothesis profile (``make verify``) and are skipped by ``make test`` to keep it fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

import spec.oracle.variants.existence_cache as oracle_e
import spec.oracle.variants.file_evictor as oracle_f
import spec.oracle.variants.metadata_cache as oracle_m
import spec.oracle.variants.pool_beliefs as oracle_p
import tests.variants.existence_cache as machine_e
import tests.variants.file_store as machine_f
import tests.variants.pool_beliefs as machine_p
from hicache import (
    HiCacheFile,
    MetadataCache,
    PooledExistenceCache,
    PoolExistenceBeliefs,
    StorageExistenceCache,
)
from hicache.file_evictor import LRUFileEvictor
from spec.existence_cache import StorageExistenceCacheSpec
from spec.metadata_cache import MetadataCacheSpec
from spec.pool_beliefs import PooledExistenceCacheSpec

__all__ = ["ALSO_NAMED", "CORRECT", "SLOW", "WRONG", "Variant"]


class Variant(NamedTuple):
    component: str
    name: str
    target: Callable[..., Any]
    clause: str


def _clause_of(cls: type) -> str:
    """The clause a machine-catalogue variant names first in its docstring (``"E4: ..."``)."""
    found = re.search(r"\b[MEPFVCB][1-9]\b", cls.__doc__ or "")
    assert found, f"{cls.__name__} names no clause"
    return found.group(0)


def metadata_cache_with_counters(ttl_seconds: float, **kwargs: Any) -> MetadataCache:
    """Production with the M8 counters on (a factory target)."""
    return MetadataCache(ttl_seconds, stats=True, **kwargs)


E_MACHINE: dict[str, Callable[[int], Any]] = dict(machine_e.VARIANTS)
P_MACHINE: dict[str, Callable[[int], Any]] = dict(machine_p.VARIANTS)

WRONG: list[Variant] = [
    *(Variant("metadata-cache", n, c, clause) for n, (c, clause) in oracle_m.WRONG.items()),
    *(Variant("existence-cache", n, c, clause) for n, (c, clause) in oracle_e.WRONG.items()),
    *(Variant("existence-cache", n, c, _clause_of(getattr(machine_e, n))) for n, c in E_MACHINE.items()),
    *(Variant("pool-beliefs", n, c, clause) for n, (c, clause) in oracle_p.WRONG.items()),
    *(Variant("pool-beliefs", n, c, _clause_of(getattr(machine_p, n))) for n, c in P_MACHINE.items()),
    *(Variant("file-evictor", n, c, _clause_of(c)) for n, c in machine_f.EVICTOR_VARIANTS.items()),
    *(Variant(component, n, c, clause) for n, (c, clause, component) in oracle_f.WRONG.items()),
    *(
        Variant("file-store", f"store: {n}", c, clauses[0])
        for n, (c, clauses) in machine_f.VARIANTS.items()
        if n != "no C1 guard"  # a race between threads: tests/concurrency, not a sequential machine
    ),
]

CORRECT: list[Variant] = [
    Variant("metadata-cache", "spec", MetadataCacheSpec, "M4"),
    Variant("metadata-cache", "production", MetadataCache, "M4"),
    Variant("metadata-cache", "production with counters", metadata_cache_with_counters, "M8"),
    *(Variant("metadata-cache", n, c, "M4") for n, c in oracle_m.CORRECT.items()),
    Variant("existence-cache", "spec", StorageExistenceCacheSpec, "E2"),
    Variant("existence-cache", "production", StorageExistenceCache, "E2"),
    *(Variant("existence-cache", n, c, "E2") for n, c in oracle_e.CORRECT.items()),
    Variant("pool-beliefs", "spec", PooledExistenceCacheSpec, "P2"),
    Variant("pool-beliefs", "production registry", PooledExistenceCache, "P2"),
    Variant("pool-beliefs", "production per-pool class", PoolExistenceBeliefs, "P2"),
    *(Variant("pool-beliefs", n, c, "P2") for n, c in oracle_p.CORRECT.items()),
    Variant("file-evictor", "production", LRUFileEvictor, "V3"),
    Variant("file-store", "production", HiCacheFile, "F3"),
]

# A variant with two mistakes: the oracle names whichever the shortest counterexample shows.
ALSO_NAMED: dict[str, frozenset[str]] = {
    # reads the chain twice (E8), and on a miss touches nothing of the believed prefix (E4)
    "ContainsAllReadsTheChainTwice": frozenset({"E4"}),
}

SLOW: frozenset[str] = frozenset(
    {
        # metadata-cache, existence-cache, pool-beliefs: 170-1050 examples (seed 0, 15 steps, CLI process)
        "RefreshOnReAdd",
        "ReAddKeepsPosition",
        "EvictNewest",
        "LenCountsExpired",
        "ExtraCoverCheckedFirst",
        "InvalidateBeyondOffByOne",
        "CoveredStopsAtInflight",
        "RegistryClearSkipsInflight",
        # file-evictor: 220-280 examples of a heavier machine
        "callback skipped when the file is already gone",
        "eviction wedged on EPERM",
        "RatioIgnored",
    }
)
