"""``python -m spec.linearizability [--histories N] [--json PATH]``: real-thread histories, checked.

Each batch has an expectation: ``linearizable`` (every history must pass) or
``caught`` (the deliberately racy variant: some history must fail).  A capped
file store is checked against the spec whose ``set`` and ``get`` take effect in
the atomic steps the evictor's contract describes (docs/LINEARIZABILITY.md).
Exit status 1 when an expectation is not met.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
from collections.abc import Callable
from pathlib import Path

from hicache.file_store import HiCacheFile
from hicache.metadata_cache import MetadataCache

from ..variants.metadata_cache import RacyMetadataCache, TornBatchMetadataCache
from .file_store import check_file_store_histories
from .metadata_cache import (
    RunSummary,
    check_real_thread_histories,
)

__all__ = ["main"]

CATCH_BOUND = 1000


Batch = tuple[str, str, Callable[[], RunSummary]]  # label, expectation, the run


def _batches(args: argparse.Namespace) -> list[Batch]:
    n, threads, length = args.histories, args.threads, args.length

    def cache(
        factory: type[MetadataCache], ttl: float, eviction: str = "birth", batches: bool = False
    ) -> Batch:
        caught = factory is not MetadataCache  # a deliberately racy variant: some history must fail
        # A batch that must catch the racy cache stops at its first violation (4-8% of histories show
        # one): its bound only has to make a miss impossible in practice, not set the cost.
        run = functools.partial(
            check_real_thread_histories,
            functools.partial(factory, eviction=eviction),
            histories=max(n, CATCH_BOUND) if caught else n,
            ttl=ttl,
            threads=threads,
            length=length,
            stop_at_first_violation=caught,
            eviction=eviction,
            batches=batches,
        )
        if caught:
            return f"{factory.__name__} (must be caught)", "caught", run
        order, more = ("" if eviction == "birth" else f" {eviction}"), (" with batches" if batches else "")
        return f"MetadataCache{order} ttl={ttl:g} cap=2{more}", "linearizable", run

    def store(cap: int, phases: bool, label: str) -> Batch:
        run = functools.partial(
            check_file_store_histories, HiCacheFile, histories=n, threads=threads, cap=cap, phases=phases
        )
        return f"HiCacheFile {label}", "linearizable", run

    return [
        cache(MetadataCache, 1.0),
        cache(MetadataCache, -1.0),
        cache(RacyMetadataCache, -1.0),
        cache(MetadataCache, 1.0, batches=True),
        cache(MetadataCache, 1.0, eviction="lru", batches=True),
        cache(MetadataCache, -1.0, eviction="lru", batches=True),
        cache(TornBatchMetadataCache, -1.0, batches=True),
        store(0, False, "no cap (every call atomic)"),
        store(6, True, "cap=6 (set and get in their atomic steps)"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__package__}", description=__doc__)
    parser.add_argument("--histories", type=int, default=100, help="histories per batch (default 100)")
    parser.add_argument("--threads", type=int, default=3)
    parser.add_argument("--length", type=int, default=25, help="operations per thread (metadata cache)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.getLogger("hicache").addHandler(logging.NullHandler())  # refused writes log; expected here
    rows = []
    for label, expect, run in _batches(args):
        summary = run()
        passed = summary.violations > 0 if expect == "caught" else summary.violations == summary.unknown == 0
        print(f"{'PASS' if passed else 'FAIL'}  {label}: {summary.line()}", flush=True)
        if summary.first_violation is not None and expect == "linearizable":
            print(summary.first_violation.explain())
        rows.append({"subject": label, "expect": expect, "passed": passed, "summary": summary.line()})
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if all(row["passed"] for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
