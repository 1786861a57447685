"""Instructions and data-cache misses per page under cachegrind: a noise-free view of the existence caches.

Wall-clock ratios on a shared, memory-bound machine compress toward 1 (the
memory stalls of an ``OrderedDict`` are shared by every variant).  Cachegrind
counts what each variant executes, exactly and repeatably.  Each figure is the
difference between a run that builds the cache and then works and a run that
only builds it, divided by the pages worked on.

    python -m benchmarks.cachegrind_existence     (needs valgrind; several minutes)
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from typing import Any

__all__ = ["main"]

ENTRIES = 64 * 1024
CALLS = 500
PAGES = 64
EVENTS = {
    "I": r"I\s+refs:\s+([\d,]+)",
    "D1 misses": r"D1\s+misses:\s+([\d,]+)",
    "LLd misses": r"LLd\s+misses:\s+([\d,]+)",
}


def _work(variant: str, operation: str, work: bool) -> None:
    """Build the variant, then (if ``work``) run ``operation`` CALLS times (run under valgrind)."""
    import gc
    import random

    from benchmarks.bench_existence_cache import POOL, TextbookExistenceCache, page_hashes, random_chains
    from hicache import StorageExistenceCache

    gc.disable()
    hashes = page_hashes(ENTRIES + CALLS * PAGES, 1)
    for h in hashes:
        hash(h)
    base, fresh = hashes[:ENTRIES], hashes[ENTRIES:]
    chains = random_chains(base, CALLS, random.Random(2))
    cache: Any = {"production": StorageExistenceCache, "textbook": TextbookExistenceCache}.get(variant)
    if cache is None:
        plain = dict.fromkeys(base)
        if work:
            for chain in chains:
                all(map(plain.__contains__, chain))
        return
    cache = cache(ENTRIES)
    for start in range(0, ENTRIES, PAGES):
        cache.add(POOL, base[start : start + PAGES])
    if not work:
        return
    if operation == "add":
        for i in range(CALLS):
            cache.add(POOL, fresh[i * PAGES : (i + 1) * PAGES])
    else:
        for chain in chains:
            cache.contains_all(POOL, chain)


def _measure(variant: str, operation: str, work: bool) -> dict[str, int]:
    with tempfile.NamedTemporaryFile() as out:
        proc = subprocess.run(
            [
                "valgrind",
                "--tool=cachegrind",
                "--cache-sim=yes",
                f"--cachegrind-out-file={out.name}",
                sys.executable,
                "-m",
                "benchmarks.cachegrind_existence",
                "--child",
                variant,
                operation,
                str(int(work)),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    found: dict[str, int] = {}
    for name, pattern in EVENTS.items():
        match = re.search(pattern, proc.stderr)
        assert match is not None, proc.stderr[-2000:]
        found[name] = int(match.group(1).replace(",", ""))
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--child"]:
        _work(args[1], args[2], args[3] == "1")
        return 0
    pages = CALLS * PAGES
    plan: list[tuple[str, str]] = [
        ("production", "contains_all"),
        ("textbook", "contains_all"),
        ("floor", "contains_all"),
        ("production", "add"),
        ("textbook", "add"),
    ]

    def per_page(worked: dict[str, int], built: dict[str, int], event: str) -> float:
        return (worked[event] - built[event]) / pages

    print(f"{ENTRIES} beliefs, {CALLS} calls of {PAGES} pages; per page:")
    print(f"| operation | variant | {' | '.join(EVENTS)} |\n|---|---|" + "---:|" * len(EVENTS))
    for variant, operation in plan:
        worked, built = _measure(variant, operation, True), _measure(variant, operation, False)
        cells = " | ".join(f"{per_page(worked, built, k):.1f}" for k in EVENTS)
        print(f"| {operation} | {variant} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
