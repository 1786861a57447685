"""MetadataCache batches (M9) and the recency order (M6-lru), each against a baseline timed in the same run.

* ``contains_many`` of 64 live keys against 64 ``contains`` calls (target <= 0.5x per key);
* ``HiCacheFile.batch_exists`` of 64 believed keys against the store before the batches
  (``batch_exists_before_issue_13`` below: each key checked, then one ``exists`` per key; target <= 0.4x);
* under ``eviction="lru"``: ``contains`` on a live key against ``"birth"`` (target <= 1.3x), ``add``
  into a full cache against ``"birth"`` (target <= 1.3x), and both against a textbook recency-ordered
  hard-TTL cache (``TextbookRecencyTTL``: an ``OrderedDict`` with ``move_to_end`` on hits and the birth
  as the value); lru ``contains`` must be no slower than the textbook's.

Real ``time.monotonic``, keys of 64 hex characters, rounds interleaved (``benchmarks/_harness.py``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable

from benchmarks._harness import compare
from benchmarks.bench_metadata_cache import _probe
from hicache import HiCacheFile, MetadataCache

BATCH = 64
KEYS = 1024
TTL = 3600.0


class TextbookRecencyTTL:
    """The textbook recency-ordered hard-TTL cache: one ``OrderedDict`` of key -> birth, ``move_to_end``
    on a hit, the least recently used popped when full.

    A speed baseline, not a MetadataCache: a full cache evicts the least recently used even when an
    expired entry could go first (M6-lru drops expired entries first; finding them here would need a scan).
    """

    def __init__(self, ttl: float, max_entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: OrderedDict[Hashable, float] = OrderedDict()
        self._lock = threading.Lock()
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock

    def contains(self, key: Hashable) -> bool:
        with self._lock:
            birth = self._entries.get(key)
            if birth is None:
                return False
            if self._clock() - birth > self._ttl:
                del self._entries[key]
                return False
            self._entries.move_to_end(key)  # most recent; the birth stays (hard TTL)
            return True

    def add(self, key: Hashable) -> None:
        with self._lock:
            now = self._clock()
            birth = self._entries.get(key)
            if birth is not None and now - birth <= self._ttl:
                return
            self._entries.pop(key, None)
            if len(self._entries) >= self._max_entries:
                self._entries.popitem(last=False)
            self._entries[key] = now


def batch_exists_before_issue_13(store: HiCacheFile, keys: Iterable[str]) -> int:
    """``HiCacheFile.batch_exists`` as it was before issue 13: every key checked one by one, then
    ``exists`` of each key in turn (a lock acquisition and a clock reading per believed key)."""
    keys = list(keys)
    for key in keys:
        store._check_key(key)
    knowledge = store._knowledge
    for count, key in enumerate(keys):
        if not (knowledge.believes(key) or knowledge.on_disk(key)):
            return count
    return len(keys)


def _keys(n: int, tag: str = "") -> list[str]:
    return [f"{tag}{i:064x}"[-64:] for i in range(n)]


def _add_loop(add: Callable[[str], None], keys: list[str], calls: int) -> Callable[[], object]:
    def run() -> object:
        n = len(keys)
        for i in range(calls):
            add(keys[i % n])
        return None

    return run


def _bench_contains_many(quick: bool) -> tuple[list[str], float]:
    keys = _keys(KEYS)
    cache = MetadataCache(TTL)
    cache.add_many(keys)
    chains = [keys[i : i + BATCH] for i in range(0, KEYS, BATCH)]
    repeats = 200 if quick else 2000
    contains, contains_many = cache.contains, cache.contains_many

    def singles() -> object:
        for i in range(repeats):
            for key in chains[i % len(chains)]:
                contains(key)
        return None

    def batches() -> object:
        for i in range(repeats):
            contains_many(chains[i % len(chains)])
        return None

    base = f"{BATCH} contains calls (baseline)"
    result = compare(
        {base: singles, f"contains_many({BATCH})": batches},
        repeats * BATCH,
        baseline=base,
        rounds=5 if quick else 21,
    )
    ratio = result.ratio(f"contains_many({BATCH})")
    return [
        f"### `contains_many` of {BATCH} live keys against {BATCH} `contains` calls (M9)",
        "",
        f'{KEYS} live keys, TTL {TTL:g} s, `eviction="birth"`; ns/op is per key asked; {repeats} chains'
        " per variant per round.",
        "",
        result.table("variant"),
        "",
        f"Target: <= 0.5x. Measured: **{ratio:.3f}x**.",
    ], ratio


def _bench_batch_exists(quick: bool) -> tuple[list[str], float]:
    directory = tempfile.mkdtemp(prefix="hicache-bench-batches-", dir="/tmp")
    try:
        keys = _keys(KEYS)
        for key in keys:
            os.close(os.open(os.path.join(directory, f"{key}.bin"), os.O_WRONLY | os.O_CREAT, 0o600))
        store = HiCacheFile(directory, extra_config={"enable_metadata_cache": True, "metadata_ttl": TTL})
        chains = [keys[i : i + BATCH] for i in range(0, KEYS, BATCH)]
        assert all(store.batch_exists(c) == BATCH == batch_exists_before_issue_13(store, c) for c in chains)
        repeats = 200 if quick else 2000

        def before() -> object:
            for i in range(repeats):
                batch_exists_before_issue_13(store, chains[i % len(chains)])
            return None

        def now() -> object:
            for i in range(repeats):
                store.batch_exists(chains[i % len(chains)])
            return None

        base = f"batch_exists({BATCH}) before issue 13 (baseline)"
        result = compare(
            {base: before, f"HiCacheFile.batch_exists({BATCH})": now},
            repeats * BATCH,
            baseline=base,
            rounds=5 if quick else 21,
        )
    finally:
        shutil.rmtree(directory)
    ratio = result.ratio(f"HiCacheFile.batch_exists({BATCH})")
    return [
        f"### `HiCacheFile.batch_exists` of {BATCH} believed keys against the store before the batches",
        "",
        f"Metadata cache on (TTL {TTL:g} s), every key believed (no filesystem call on either side);"
        f" ns/op is per key asked; {repeats} chains per variant per round.  The baseline checks each key"
        " and asks the metadata cache once per key (one lock and one clock reading each); today's checks"
        " the keys joined and asks one `contains_prefix`.",
        "",
        result.table("variant"),
        "",
        f"Target: <= 0.4x. Measured: **{ratio:.3f}x**.",
    ], ratio


def _bench_lru(quick: bool) -> tuple[list[str], dict[str, float]]:
    calls = 20_000 if quick else 200_000
    rounds = 5 if quick else 21
    keys = _keys(KEYS)
    birth = MetadataCache(TTL, max_entries=2 * KEYS)
    lru = MetadataCache(TTL, max_entries=2 * KEYS, eviction="lru")
    textbook = TextbookRecencyTTL(TTL, 2 * KEYS)
    for cache in (birth, lru, textbook):
        for key in keys:
            cache.add(key)
    b_name, l_name, t_name = (
        'eviction="birth" (baseline)',
        'eviction="lru"',
        "textbook OrderedDict + move_to_end",
    )
    hits = compare(
        {
            b_name: _probe(birth.contains, keys, calls),
            l_name: _probe(lru.contains, keys, calls),
            t_name: _probe(textbook.contains, keys, calls),
        },
        calls,
        baseline=b_name,
        rounds=rounds,
    )
    # add into a full cache: a pool 4x the bound, cycled, so each key added was evicted long before.
    adds = calls // 2
    pool = _keys(4 * KEYS, "a")
    full_birth = MetadataCache(TTL, max_entries=KEYS)
    full_lru = MetadataCache(TTL, max_entries=KEYS, eviction="lru")
    full_textbook = TextbookRecencyTTL(TTL, KEYS)
    for cache in (full_birth, full_lru, full_textbook):
        for key in pool[-KEYS:]:
            cache.add(key)
    added = compare(
        {
            b_name: _add_loop(full_birth.add, pool, adds),
            l_name: _add_loop(full_lru.add, pool, adds),
            t_name: _add_loop(full_textbook.add, pool, adds),
        },
        adds,
        baseline=b_name,
        rounds=rounds,
    )
    figures = {
        "contains lru/birth": hits.ratio(l_name),
        "contains lru/textbook": hits.ratio(l_name, t_name),
        "add lru/birth": added.ratio(l_name),
        "add lru/textbook": added.ratio(l_name, t_name),
    }
    return [
        '### `eviction="lru"` against `"birth"` and a textbook recency-ordered hard-TTL cache (M6-lru)',
        "",
        f"TTL {TTL:g} s, real `time.monotonic`.  `contains`: {KEYS} live keys in a cache bounded at"
        f" {2 * KEYS}, {calls} calls per variant per round.  `add` into a full cache: bound {KEYS}, a pool"
        f" of {4 * KEYS} keys cycled (each add is of a key evicted long before: one eviction per add),"
        f" {adds} calls per variant per round.",
        "",
        hits.table("`contains` on a live key"),
        "",
        added.table("`add` into a full cache"),
        "",
        f"Targets: lru `contains` <= 1.3x birth, measured **{figures['contains lru/birth']:.3f}x**;"
        f" lru `add` into a full cache <= 1.3x birth, measured **{figures['add lru/birth']:.3f}x**;"
        f" lru `contains` <= 1.0x the textbook, measured **{figures['contains lru/textbook']:.3f}x**"
        f" (lru `add`: {figures['add lru/textbook']:.3f}x the textbook's, which keeps one dict instead of"
        " two and never drops expired entries first).",
    ], figures


def run(quick: bool) -> str:
    lines = ["## MetadataCache batches and the recency order (M9, M6-lru)", ""]
    section, _ = _bench_contains_many(quick)
    lines += [*section, ""]
    section, _ = _bench_batch_exists(quick)
    lines += [*section, ""]
    section, _ = _bench_lru(quick)
    lines += section
    return "\n".join(lines)
