"""StorageExistenceCache and PoolExistenceBeliefs against a textbook LRU and the dict-lookup floor (issue 3).

Seeded; 512Ki beliefs of 64-hex-character page hashes, chains of 64 pages.
Variants, measured interleaved in the same process (``benchmarks/_harness.py``):

* production (``hicache``);
* the spec (``spec.models.existence_cache``): its operations are O(n) list rebuilds,
  so it is timed on a small cache only (its own table);
* the textbook baseline: one ``OrderedDict`` keyed by ``(pool, hash)`` tuples,
  a Python loop touching each page with ``move_to_end`` (per pool: an
  ``OrderedDict`` of hashes);
* the floor: ``all(map(d.__contains__, chain))`` on a plain dict keyed by the
  page hashes: a lookup per page and no LRU bookkeeping at all.

Workloads: chains in insertion order and at random offsets, all pages
believed; a chain missing its middle page; ``covers_all`` with four pages
covered only by ``extra_cover`` (per pool: in flight); ``add`` of new chains
into a full cache (64 evictions per call); bytes per belief by tracemalloc
(the caller's hash strings excluded).
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections import OrderedDict
from collections.abc import Callable, Collection, Container, Hashable, Iterable, Sequence
from typing import Any

from benchmarks._harness import Comparison, compare
from hicache import PoolExistenceBeliefs, StorageExistenceCache
from spec.models.existence_cache import StorageExistenceCacheSpec

__all__ = [
    "TextbookExistenceCache",
    "TextbookPoolBeliefs",
    "measure_contains_all",
    "page_hashes",
    "run",
]

ENTRIES = 512 * 1024
PAGES = 64
CALLS = 512  # chains per variant per round
POOL = "kv"
SPEC_ENTRIES = 2048


class TextbookExistenceCache:
    """The baseline anyone would write: OrderedDict of (pool, hash), move_to_end per page."""

    def __init__(self, max_entries: int) -> None:
        self._beliefs: OrderedDict[tuple[Hashable, Hashable], None] = OrderedDict()
        self._max_entries = max_entries

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        beliefs = self._beliefs
        for h in hashes:
            key = (pool, h)
            if key in beliefs:
                beliefs.move_to_end(key)
            else:
                beliefs[key] = None
        while len(beliefs) > self._max_entries:
            beliefs.popitem(last=False)

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        beliefs = self._beliefs
        for h in hashes:
            key = (pool, h)
            if key not in beliefs:
                return False
            beliefs.move_to_end(key)
        return True

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        if not isinstance(extra_cover, Container):  # B1 (E5), as production's check_cover
            raise TypeError(f"extra_cover must be a container, got {extra_cover!r}")
        beliefs = self._beliefs
        for h in hashes:
            key = (pool, h)
            if key in beliefs:
                beliefs.move_to_end(key)
            elif h not in extra_cover:
                return False
        return True


class TextbookPoolBeliefs:
    """The per-pool baseline: OrderedDict of hashes, move_to_end per page, a dict of in-flight counts."""

    def __init__(self, max_entries: int) -> None:
        self._beliefs: OrderedDict[Hashable, None] = OrderedDict()
        self._inflight: dict[Hashable, int] = {}
        self._max_entries = max_entries

    def add(self, hashes: Iterable[Hashable]) -> None:
        beliefs = self._beliefs
        for h in hashes:
            if h in beliefs:
                beliefs.move_to_end(h)
            else:
                beliefs[h] = None
        while len(beliefs) > self._max_entries:
            beliefs.popitem(last=False)

    def contains_all(self, hashes: Iterable[Hashable]) -> bool:
        beliefs = self._beliefs
        for h in hashes:
            if h not in beliefs:
                return False
            beliefs.move_to_end(h)
        return True

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            self._inflight[h] = self._inflight.get(h, 0) + 1

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        beliefs, inflight = self._beliefs, self._inflight
        for h in hashes:
            if h in beliefs:
                beliefs.move_to_end(h)
            elif h not in inflight:
                return False
        return True


def page_hashes(count: int, seed: int) -> list[str]:
    """``count`` distinct 64-hex-character page hashes (seeded)."""
    rng = random.Random(seed)
    return [f"{rng.getrandbits(256):064x}" for _ in range(count)]


def in_order_chains(hashes: Sequence[str], calls: int) -> list[list[str]]:
    """Consecutive chains in insertion order, wrapping around."""
    chains = len(hashes) // PAGES
    return [list(hashes[(i % chains) * PAGES : (i % chains + 1) * PAGES]) for i in range(calls)]


def random_chains(hashes: Sequence[str], calls: int, rng: random.Random) -> list[list[str]]:
    """Chains of consecutive beliefs starting at random offsets."""
    starts = [rng.randrange(len(hashes) - PAGES) for _ in range(calls)]
    return [list(hashes[s : s + PAGES]) for s in starts]


def _walk(check: Callable[[list[str]], bool], chains: list[list[str]], want: bool) -> Callable[[], object]:
    def run() -> object:
        for chain in chains:
            if check(chain) is not want:
                raise AssertionError("benchmark variant answered wrongly")
        return None

    return run


def _global_variants(size: int, hashes: list[str], with_spec: bool) -> dict[str, Any]:
    """Build every global variant holding ``hashes`` (added in chains, in order)."""
    built: dict[str, Any] = {
        "production": StorageExistenceCache(size),
        TEXTBOOK: TextbookExistenceCache(size),
    }
    if with_spec:
        built["spec"] = StorageExistenceCacheSpec(size)
    for cache in built.values():
        for start in range(0, len(hashes), PAGES):
            cache.add(POOL, hashes[start : start + PAGES])
    built[FLOOR] = dict.fromkeys(hashes)
    return built


def _contains_all_runs(
    built: dict[str, Any], chains: list[list[str]], want: bool
) -> dict[str, Callable[[], object]]:
    return {name: _walk(_checker(cache), chains, want) for name, cache in built.items()}


def _checker(cache: Any) -> Callable[[list[str]], bool]:
    """The per-chain check of one variant: ``contains_all`` or, for the floor's dict, the lookups alone."""
    if isinstance(cache, dict):
        contains = cache.__contains__

        def floor(chain: list[str]) -> bool:
            return all(map(contains, chain))

        return floor

    def contains_all(chain: list[str]) -> bool:
        return bool(cache.contains_all(POOL, chain))

    return contains_all


def timed(
    variants: dict[str, Callable[[], object]], ops: int, *, baseline: str, rounds: int, warmup: int = 2
) -> Comparison:
    """``compare`` with the garbage collector paused, as ``timeit`` does.

    Otherwise the textbook's per-page key tuples trigger collections that walk
    every large structure alive in the process, and its figures swing by 5x.
    """
    gc.collect()
    gc.disable()
    try:
        return compare(variants, ops, baseline=baseline, rounds=rounds, warmup=warmup)
    finally:
        gc.enable()


def measure_contains_all(
    size: int, *, rounds: int, calls: int, with_spec: bool, seed: int = 3
) -> dict[str, float]:
    """Median ns per page of ``contains_all`` on random-offset chains, per variant, at ``size`` beliefs."""
    hashes = page_hashes(size, seed)
    built = _global_variants(size, hashes, with_spec)
    chains = random_chains(hashes, calls, random.Random(seed))
    result = timed(
        _contains_all_runs(built, chains, True), calls * PAGES, baseline="production", rounds=rounds
    )
    return {name: result.median_ns(name) for name in result.samples}


def _table(title: str, result: Comparison, floor: str | None) -> str:
    header = f"| {title} | ns/page (median) | ratio to {result.baseline} |"
    rule = "|---|---:|---:|"
    if floor is not None:
        header += " ratio to the floor |"
        rule += "---:|"
    rows = [header, rule]
    for name in result.samples:
        row = f"| {name} | {result.median_ns(name):.1f} | {result.ratio(name):.3f} |"
        if floor is not None:
            row += f" {result.ratio(name, floor):.3f} |"
        rows.append(row)
    return "\n".join(rows)


def _bytes_per_belief(build: Callable[[], object], count: int) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return (after - before) / count


def _memory(hashes: list[str]) -> tuple[str, dict[str, float]]:
    count = len(hashes)
    chains = [hashes[i : i + PAGES] for i in range(0, count, PAGES)]

    def filled(cache: Any, *pool: str) -> Any:
        for chain in chains:
            cache.add(*pool, chain)
        return cache

    figures = {
        TEXTBOOK: _bytes_per_belief(lambda: filled(TextbookExistenceCache(count), POOL), count),
        "production StorageExistenceCache": _bytes_per_belief(
            lambda: filled(StorageExistenceCache(count), POOL), count
        ),
        "production, non-primary pool (tagged keys)": _bytes_per_belief(
            lambda: filled(_with_other_primary(count), POOL), count
        ),
        "textbook per-pool OrderedDict[hash]": _bytes_per_belief(
            lambda: filled(TextbookPoolBeliefs(count)), count
        ),
        "production PoolExistenceBeliefs": _bytes_per_belief(
            lambda: filled(PoolExistenceBeliefs(count)), count
        ),
        "plain dict of the hashes (no order)": _bytes_per_belief(lambda: dict.fromkeys(hashes), count),
    }
    base = figures[TEXTBOOK]
    rows = ["| structure | bytes per belief | ratio to textbook |", "|---|---:|---:|"]
    rows += [f"| {name} | {value:.1f} | {value / base:.3f} |" for name, value in figures.items()]
    return "\n".join(rows), figures


def _with_other_primary(size: int) -> StorageExistenceCache:
    """A cache whose primary pool is another one, so POOL's beliefs use tagged keys."""
    cache = StorageExistenceCache(size)
    cache.add("other", ["x"])
    cache.invalidate_beyond("other", ["x"], 0)
    return cache


FLOOR = "floor all(map(dict.__contains__))"
TEXTBOOK = "textbook OrderedDict[(pool, hash)]"
POOL_TEXTBOOK = "textbook OrderedDict[hash]"


class Workload:
    """The seeded inputs shared by the sections."""

    def __init__(self, entries: int, calls: int, rounds: int) -> None:
        self.entries, self.calls, self.rounds = entries, calls, rounds
        self.rng = random.Random(20261129)
        self.hashes = page_hashes(entries, 1)
        self.in_order = in_order_chains(self.hashes, calls)
        self.random = random_chains(self.hashes, calls, self.rng)
        self.missing = random_chains(self.hashes, calls, self.rng)
        for chain, hole in zip(self.missing, page_hashes(calls, 99), strict=True):
            chain[PAGES // 2] = hole
        self.covered = random_chains(self.hashes, calls, self.rng)
        self.cover_pages = page_hashes(4 * calls, 98)
        self.covers = []
        for i, chain in enumerate(self.covered):
            extra = self.cover_pages[4 * i : 4 * i + 4]
            for slot, page in zip((5, 20, 40, 60), extra, strict=True):
                chain[slot] = page
            self.covers.append(frozenset(extra))
        self.fresh = page_hashes(entries + 2 * calls * PAGES, 5)[entries:] + self.hashes


def _global_section(w: Workload, ratios: dict[str, float]) -> list[str]:
    out: list[str] = []
    built = _global_variants(w.entries, w.hashes, with_spec=False)
    other = _with_other_primary(w.entries)
    for start in range(0, w.entries, PAGES):
        other.add(POOL, w.hashes[start : start + PAGES])
    ops = w.calls * PAGES
    for label, chains in (("in insertion order", w.in_order), ("at random offsets", w.random)):
        runs = _contains_all_runs(built, chains, True)
        runs["production, non-primary pool (tagged keys)"] = _walk(
            lambda chain: other.contains_all(POOL, chain), chains, True
        )
        result = timed(runs, ops, baseline=TEXTBOOK, rounds=w.rounds)
        ratios[f"global contains_all {label}"] = result.ratio("production")
        ratios[f"global contains_all {label} / floor"] = result.ratio("production", FLOOR)
        out += ["", _table(f"`contains_all`, all believed, chains {label}", result, FLOOR)]

    result = timed(_contains_all_runs(built, w.missing, False), ops, baseline=TEXTBOOK, rounds=w.rounds)
    ratios["global contains_all, miss in the middle"] = result.ratio("production")
    out += ["", _table("`contains_all`, page 32 of 64 missing (random offsets)", result, FLOOR)]

    def covers_run(cache: Any) -> Callable[[], object]:
        def run_covers() -> object:
            for chain, extra in zip(w.covered, w.covers, strict=True):
                if not cache.covers_all(POOL, chain, extra):
                    raise AssertionError("benchmark variant answered wrongly")
            return None

        return run_covers

    result = timed(
        {"production": covers_run(built["production"]), TEXTBOOK: covers_run(built[TEXTBOOK])},
        ops,
        baseline=TEXTBOOK,
        rounds=w.rounds,
    )
    ratios["global covers_all"] = result.ratio("production")
    out += ["", _table("`covers_all`, 4 of 64 pages only in `extra_cover`", result, None)]

    cursor = {name: 0 for name in ("production", TEXTBOOK)}

    def add_run(name: str) -> Callable[[], object]:
        cache = built[name]

        def run_adds() -> object:
            at = cursor[name]
            for _ in range(w.calls):
                if at + PAGES > len(w.fresh):
                    at = 0
                cache.add(POOL, w.fresh[at : at + PAGES])
                at += PAGES
            cursor[name] = at
            return None

        return run_adds

    result = timed({name: add_run(name) for name in cursor}, ops, baseline=TEXTBOOK, rounds=w.rounds)
    assert len(built["production"]) == w.entries
    ratios["global add"] = result.ratio("production")
    out += ["", _table("`add` of 64 new pages into a full cache (64 evictions per call)", result, None)]
    return out


def _spec_section(w: Workload) -> list[str]:
    small = page_hashes(SPEC_ENTRIES, 7)
    built = _global_variants(SPEC_ENTRIES, small, with_spec=True)
    calls = 16
    result = timed(
        _contains_all_runs(built, random_chains(small, calls, w.rng), True),
        calls * PAGES,
        baseline=TEXTBOOK,
        rounds=min(w.rounds, 5),
        warmup=1,
    )
    fresh = page_hashes(SPEC_ENTRIES + calls * PAGES * 8, 8)[SPEC_ENTRIES:] + small
    cursor = {name: 0 for name in built if name != FLOOR}

    def add_run(name: str) -> Callable[[], object]:
        def run_adds() -> object:
            at = cursor[name]
            for _ in range(calls):
                at = 0 if at + PAGES > len(fresh) else at
                built[name].add(POOL, fresh[at : at + PAGES])
                at += PAGES
            cursor[name] = at
            return None

        return run_adds

    adds = timed(
        {name: add_run(name) for name in cursor},
        calls * PAGES,
        baseline=TEXTBOOK,
        rounds=min(w.rounds, 5),
        warmup=1,
    )
    return [
        "",
        f"The spec rebuilds its list on every touch (O(n) per page), so it is timed on {SPEC_ENTRIES}"
        f" beliefs, {calls} chains per round (a cache this small also shows the ratios when the"
        " structures stay in the CPU caches):",
        "",
        _table("`contains_all` at random offsets, small cache", result, FLOOR),
        "",
        _table("`add` of 64 new pages into a full small cache", adds, None),
    ]


def _pool_section(w: Workload, ratios: dict[str, float]) -> list[str]:
    out: list[str] = []
    pool = PoolExistenceBeliefs(w.entries)
    textbook = TextbookPoolBeliefs(w.entries)
    for start in range(0, w.entries, PAGES):
        pool.add(w.hashes[start : start + PAGES])
        textbook.add(w.hashes[start : start + PAGES])
    plain = dict.fromkeys(w.hashes)
    ops = w.calls * PAGES
    for label, chains in (("in insertion order", w.in_order), ("at random offsets", w.random)):
        result = timed(
            {
                "production": _walk(pool.contains_all, chains, True),
                POOL_TEXTBOOK: _walk(textbook.contains_all, chains, True),
                FLOOR: _walk(lambda chain: all(map(plain.__contains__, chain)), chains, True),
            },
            ops,
            baseline=POOL_TEXTBOOK,
            rounds=w.rounds,
        )
        ratios[f"per-pool contains_all {label}"] = result.ratio("production")
        ratios[f"per-pool contains_all {label} / floor"] = result.ratio("production", FLOOR)
        out += ["", _table(f"per pool: `contains_all`, all believed, chains {label}", result, FLOOR)]
    pool.track_inflight(w.cover_pages)
    textbook.track_inflight(w.cover_pages)
    result = timed(
        {
            "production": _walk(pool.covered, w.covered, True),
            POOL_TEXTBOOK: _walk(textbook.covered, w.covered, True),
        },
        ops,
        baseline=POOL_TEXTBOOK,
        rounds=w.rounds,
    )
    ratios["per-pool covered"] = result.ratio("production")
    out += ["", _table("per pool: `covered`, 4 of 64 pages only in flight", result, None)]
    return out


TARGETS = (
    (
        "global `contains_all` <= 0.9x textbook, insertion order",
        "global contains_all in insertion order",
        0.9,
    ),
    ("global `contains_all` <= 0.9x textbook, random offsets", "global contains_all at random offsets", 0.9),
    (
        "(ambition) global `contains_all` <= 1.25x floor, insertion order",
        "global contains_all in insertion order / floor",
        1.25,
    ),
    (
        "(ambition) global `contains_all` <= 1.25x floor, random offsets",
        "global contains_all at random offsets / floor",
        1.25,
    ),
    (
        "per-pool `contains_all` <= 1.0x its textbook, insertion order",
        "per-pool contains_all in insertion order",
        1.0,
    ),
    (
        "per-pool `contains_all` <= 1.0x its textbook, random offsets",
        "per-pool contains_all at random offsets",
        1.0,
    ),
    (
        "per-pool `contains_all` <= 1.2x floor, insertion order",
        "per-pool contains_all in insertion order / floor",
        1.2,
    ),
    (
        "per-pool `contains_all` <= 1.2x floor, random offsets",
        "per-pool contains_all at random offsets / floor",
        1.2,
    ),
    ("global `add` <= 0.8x textbook", "global add", 0.8),
    ("global memory <= 0.6x textbook bytes per belief", "global memory", 0.6),
)


def run(quick: bool) -> str:
    entries = ENTRIES // 16 if quick else ENTRIES
    w = Workload(entries, CALLS // 4 if quick else CALLS, 5 if quick else 15)
    out = [
        "## Storage existence caches (E1-E8, P1-P5)",
        "",
        f"{entries} beliefs of 64-hex-character hashes in one pool, chains of {PAGES} pages,"
        f" {w.calls} chains per variant per round, {w.rounds} rounds interleaved, garbage collector"
        " paused while timing (as `timeit` does); ns per chain page. Floor: `all(map(d.__contains__, chain))`"
        " on a plain dict of the hashes (no LRU bookkeeping). Production's first pool keys beliefs by the"
        " bare hash; the row `non-primary pool` times a pool that is not the first one (tagged tuple keys).",
    ]
    ratios: dict[str, float] = {}
    out += _global_section(w, ratios)
    out += _spec_section(w)
    out += _pool_section(w, ratios)
    table, memory = _memory(w.hashes)
    ratios["global memory"] = memory["production StorageExistenceCache"] / memory[TEXTBOOK]
    out += ["", f"Bytes per belief (tracemalloc, {entries} beliefs, hash strings excluded):", "", table]
    out += [
        "",
        "Targets (issue 3) against measurements:",
        "",
        "| target | measured | met |",
        "|---|---:|:---:|",
    ]
    for text, key, limit in TARGETS:
        out.append(f"| {text} | {ratios[key]:.3f}x | {'yes' if ratios[key] <= limit else '**no**'} |")
    for text, key in (
        ("`covers_all` vs textbook", "global covers_all"),
        ("per-pool `covered` vs textbook", "per-pool covered"),
        ("`contains_all` with a miss in the middle vs textbook", "global contains_all, miss in the middle"),
    ):
        out.append(f"| (no target) {text} | {ratios[key]:.3f}x | - |")
    out += [
        "",
        "Chart of ns/page against cache size: [existence_cache.svg](existence_cache.svg) (`make chart`).",
        "",
        ADD_TARGET_NOTE,
    ]
    return "\n".join(out)


ADD_TARGET_NOTE = """\
Why global `add` misses its target (<= 0.8x textbook at 512Ki; measured 0.85-0.98x over runs,
0.62x at 2Ki): at this size `add` is memory traffic that any dict keyed by the caller's strings
pays.  CPython 3.11 gives a dict whose keys are all `str` 16-byte entries that store no hash, so
resizes and probe collisions re-read hashes from cold string objects; even a plain dict FIFO of the
bare strings (not an LRU), all in C, measures about 0.85x.  Candidates measured in this session:
a deque-of-touches LRU (a dict of occurrence counts, compacted at slack x live) does `add` in
about 0.84x (0.7x with hash-storing dicts), but its compaction costs one random lookup per stale
touch, so `contains_all` amortized over whole compaction cycles becomes 0.97-1.5x textbook (random
offsets) and 1.3-2.6x (insertion order) at every slack that keeps memory under 0.6x; pinning one
private non-`str` key at the front of the OrderedDict makes its dict store hashes: `add`
0.70-0.75x and `contains_all` unchanged, but 88.0 B per belief (0.611x, over the 0.6x memory
target).  Two more, measured later: a two-generation LRU of plain dicts (old keys evicted through
a list, touches popped and re-inserted) is 1.4x textbook on `add` and 1.2-1.9x on `contains_all`,
because every touch uses up a dict entry and each rebuild re-reads all 512Ki cold key strings; a
warming pass (`any(map(d.__contains__, chain))` before inserting) changes nothing (0.92-0.98x).
Production keeps the structure that meets the memory target (77.3 B, 0.537x right after
filling; 0.614x after one full churn doubles the table, like every OrderedDict variant).  Meeting
both the `add` and the memory target needs one of them relaxed by about 2%."""
