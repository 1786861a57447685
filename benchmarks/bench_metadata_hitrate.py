"""The hit rate of MetadataCache's two eviction orders on Zipf key streams (M6, M6-lru).

No timing: the figures are deterministic (seeded streams, a clock stepping once per request), so this
section reads the same on every machine.  ``make hitrate`` draws them (``benchmarks/hitrate.py``).
"""

from __future__ import annotations

from benchmarks.hitrate import KEYS_PER_ENTRY, MEASURED, SEED, SIZES, TTL_CACHES, WARMUP, sweep, table


def run(quick: bool) -> str:
    figures = sweep(SIZES[:3] if quick else SIZES)
    return "\n".join(
        [
            '## MetadataCache hit rate: `eviction="birth"` against `"lru"` (M6, M6-lru)',
            "",
            f"Seeded Zipf key streams (seed {SEED}) over {KEYS_PER_ENTRY} x `max_entries` distinct keys;"
            " each request is `contains(key)`, then `add(key)` on a miss; the clock steps once per request;"
            f" TTL -1, or {TTL_CACHES} x `max_entries` requests.  Counted over {MEASURED} x `max_entries`"
            f" requests after a warm-up of {WARMUP} x `max_entries`.  Chart:"
            " [metadata_hitrate.svg](metadata_hitrate.svg) (`make hitrate`).",
            "",
            table(figures),
        ]
    )
