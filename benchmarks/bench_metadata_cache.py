"""MetadataCache.contains() on a live key against a plain lock + dict + monotonic clock.

The baseline is what anyone would write without hard-TTL re-add semantics,
bounded size, reclaiming or counters: the floor our hot path must match (a floor
for speed only: it does not mean what MetadataCache means, see PlainTTLSet).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable

from benchmarks._harness import compare
from hicache import MetadataCache

KEYS = 1024
CALLS = 200_000


class PlainTTLSet:
    """The baseline: one lock, one dict of births, the monotonic clock.

    A speed floor, not a correct MetadataCache: re-adding a live key slides its lifetime (M3 says
    it must not) and a TTL of -1 expires at once instead of never (M2).  The oracle catches it
    (``python -m spec.oracle metadata-cache benchmarks.bench_metadata_cache:PlainTTLSet``; asserted
    by tests/oracle/catalogue.py).
    """

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._births: dict[Hashable, float] = {}
        self._lock = threading.Lock()
        self._ttl = ttl
        self._clock = clock

    def add(self, key: Hashable) -> None:
        with self._lock:
            self._births[key] = self._clock()

    def contains(self, key: Hashable) -> bool:
        with self._lock:
            birth = self._births.get(key)
            return birth is not None and self._clock() - birth <= self._ttl


def _probe(contains: Callable[[Hashable], bool], keys: list[str], calls: int) -> Callable[[], object]:
    def run() -> object:
        n = len(keys)
        hits = 0
        for i in range(calls):
            hits += contains(keys[i % n])
        assert hits == calls
        return hits

    return run


def run(quick: bool) -> str:
    calls = CALLS // 10 if quick else CALLS
    keys = [f"{i:064x}" for i in range(KEYS)]
    plain = PlainTTLSet(3600.0)
    production = MetadataCache(3600.0)
    counting = MetadataCache(3600.0, max_entries=KEYS * 2, stats=True)
    for key in keys:
        plain.add(key)
        production.add(key)
        counting.add(key)
    result = compare(
        {
            "plain lock+dict+monotonic (baseline)": _probe(plain.contains, keys, calls),
            "MetadataCache": _probe(production.contains, keys, calls),
            "MetadataCache(max_entries, stats=True)": _probe(counting.contains, keys, calls),
        },
        calls,
        baseline="plain lock+dict+monotonic (baseline)",
        rounds=5 if quick else 21,
    )
    ratio = result.ratio("MetadataCache")
    return "\n".join(
        [
            "## MetadataCache.contains() on a live key (M4)",
            "",
            f"{KEYS} live keys of 64 hex characters, TTL 3600 s, real `time.monotonic`,"
            f" {calls} calls per variant per round; rounds interleaved.",
            "",
            result.table("variant"),
            "",
            f"Target: `MetadataCache` <= 1.0x the plain baseline (noise band +-3%)."
            f" Measured: **{ratio:.3f}x**.",
        ]
    )
