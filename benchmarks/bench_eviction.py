"""A ``set`` at the cap with 100Ki entries against one with 1Ki entries (issue 12 item 7; S7).

Each store's directory holds ``n`` one-byte pages of its namespace and its cap is ``n`` bytes with
``eviction_ratio=1.0``, so every timed ``set`` of a new one-byte key evicts exactly one victim (one
unlink) and writes one file.  Before S7 the evictor copied its whole LRU order under the lock on every
such ``set`` (33 ms at 300k entries); the cost must now not grow with the entries: target <= 1.5x.

Directories live under ``/tmp`` and are removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable

from benchmarks._harness import Comparison, ns_per_op
from hicache.file_store import HiCacheFile

SMALL = 1024
LARGE = 100 * 1024


def _fill(directory: str, n: int) -> None:
    """``n`` one-byte pages of the default namespace, oldest first, written without the store."""
    os.makedirs(directory, mode=0o700)
    for i in range(n):
        fd = os.open(os.path.join(directory, f"old{i:08x}.bin"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"x")
        os.close(fd)


def run(quick: bool) -> str:
    root = tempfile.mkdtemp(prefix="hicache-bench-evict-", dir="/tmp")
    large = SMALL * 8 if quick else LARGE
    ops, rounds = (200, 3) if quick else (1000, 5)
    try:
        stores = {}
        for n in (SMALL, large):
            directory = os.path.join(root, str(n))
            _fill(directory, n)
            stores[n] = HiCacheFile(directory, extra_config={"max_size": n, "eviction_ratio": 1.0})
            assert len(stores[n].evictor) == n
        counter = [0]

        def set_new(store: HiCacheFile) -> Callable[[], object]:
            def once() -> object:
                for _ in range(ops):
                    counter[0] += 1
                    store.set(f"new{counter[0]:08x}", b"y")
                return None

            return once

        names = {
            SMALL: f"set at the cap, {SMALL} entries (baseline)",
            large: f"set at the cap, {large} entries",
        }
        samples: dict[str, list[float]] = {name: [] for name in names.values()}
        for r in range(rounds + 1):  # round 0 is a warm-up
            order = [SMALL, large] if r % 2 == 0 else [large, SMALL]
            for n in order:
                cost = ns_per_op(set_new(stores[n]), ops)
                if r:
                    samples[names[n]].append(cost)
        for n, store in stores.items():
            assert len(store.evictor) == n and store.evictor.total == n, "every set evicted one victim"
        result = Comparison(names[SMALL], samples)
        ratio = result.ratio(names[large])
        return "\n".join(
            [
                "### `set` at the cap: 100Ki entries against 1Ki (S7)",
                "",
                f"{ops} sets of new one-byte keys per round, {rounds} rounds; cap = entries (bytes),"
                " `eviction_ratio=1.0`: one victim per set.",
                "",
                result.table("set"),
                "",
                f"Target <= 1.5x. Measured: **{ratio:.2f}x**.",
            ]
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
