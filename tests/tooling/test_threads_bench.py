"""The ``--threads`` benchmark times every variant the catalogue says must FAIL or PASS under threads."""

from __future__ import annotations

from benchmarks.bench_oracle_threads import RUNS
from spec.variants import file_store, metadata_cache


def test_the_threads_benchmark_runs_every_concurrent_variant_of_the_catalogue() -> None:
    timed = {target.rsplit(":", 1)[1] for _, _, target, _ in RUNS}
    catalogue = {
        klass.__name__
        for registry in (metadata_cache.CONCURRENT, file_store.CONCURRENT)
        for klass, _ in registry.values()
    }
    catalogue |= {klass.__name__ for klass in metadata_cache.CONCURRENT_CORRECT.values()}
    catalogue |= {getattr(f, "__name__", "") for f in file_store.CONCURRENT_CORRECT.values()}
    missing = catalogue - timed
    assert not missing, f"not timed by benchmarks/bench_oracle_threads.py: {sorted(missing)}"
