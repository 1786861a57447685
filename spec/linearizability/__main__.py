"""``python -m spec.linearizability [--histories N] [--json PATH]``: real-thread histories, checked.

Production MetadataCache (TTL 1 with clock moves, and TTL -1), then the
deliberately racy variant, which must be caught (exit status 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hicache.metadata_cache import MetadataCache
from spec.linearizability.metadata_cache import RacyMetadataCache, check_real_thread_histories

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.linearizability", description=__doc__)
    parser.add_argument("--histories", type=int, default=100, help="histories per batch (default 100)")
    parser.add_argument("--threads", type=int, default=3)
    parser.add_argument("--length", type=int, default=25, help="operations per thread")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = []
    ok = True
    for label, factory, ttl, expect_violation in (
        ("MetadataCache ttl=1 cap=2", MetadataCache, 1.0, False),
        ("MetadataCache ttl=-1 cap=2", MetadataCache, -1.0, False),
        ("RacyMetadataCache (must be caught)", RacyMetadataCache, -1.0, True),
    ):
        summary = check_real_thread_histories(
            factory,
            histories=args.histories,
            ttl=ttl,
            threads=args.threads,
            length=args.length,
            stop_at_first_violation=expect_violation,
        )
        passed = summary.violations > 0 if expect_violation else summary.violations == summary.unknown == 0
        ok = ok and passed
        print(f"{'PASS' if passed else 'FAIL'}  {label}: {summary.line()}", flush=True)
        if summary.first_violation is not None and not expect_violation:
            print(summary.first_violation.explain())
        rows.append({"subject": label, "passed": passed, "summary": summary.line()})
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
