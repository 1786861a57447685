"""The recorder (O9): real traffic written as hicache-trace/1, then judged by ``--trace`` (O7) (issue 21).

The project's ``MetadataCache`` on the real clock under 4 threads PASSes,
whatever the interleaving (a correct cache has no wrong one); a variant that
evicts its newest entry FAILs on M6 because one thread makes it evict, by
construction, while the other threads only read other keys.  The recorder
itself: answers and exceptions pass through unchanged, one-shot iterators are
not consumed, ``len`` and ``in`` are recorded, the pools a registry hands out
are recorded as ``pool.*`` calls.
"""

from __future__ import annotations

import io
import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hicache import MetadataCache, PooledExistenceCache, StorageExistenceCache, TraceRecorder
from spec.oracle._trace import check_trace
from spec.variants.metadata_cache import EvictsTheNewest

pytestmark = pytest.mark.threads

KEYS = [f"k{i}" for i in range(8)]


def _serve(cache: Any, thread: int, calls: int, start: threading.Barrier) -> None:
    rng = random.Random(thread)
    start.wait()
    for _ in range(calls):
        key, roll = rng.choice(KEYS), rng.random()
        if roll < 0.35:
            cache.add(key)
        elif roll < 0.8:
            cache.contains(key)
        elif roll < 0.87:
            cache.remove(key)
        elif roll < 0.94:
            cache.add_many([key])
        else:
            cache.contains_many(iter([key]))  # a one-shot iterator: recorded as a list, still served


@pytest.mark.clauses("O9", "O7", "M7", "M2", "M3", "M4")
def test_a_real_clock_trace_of_the_metadata_cache_under_4_threads_passes(tmp_path: Path) -> None:
    path = tmp_path / "cache.trace.jsonl"
    ttl = 0.002  # short, so that lives end inside the trace: expiry is judged on the real clock
    with TraceRecorder(str(path), "metadata-cache", {"ttl_seconds": ttl, "max_entries": None}) as recorder:
        cache = recorder.wrap(MetadataCache(ttl, clock=time.monotonic))
        start = threading.Barrier(4)
        threads = [threading.Thread(target=_serve, args=(cache, t, 1500, start)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    result = check_trace("metadata-cache", str(path))
    assert result.verdict == "PASS", result.summary()
    assert result.figures["calls"] == 6000 and result.figures["threads"] == 4
    assert {"M3", "M4", "M5", "M9"} <= set(result.passed_clauses)


@pytest.mark.clauses("O9", "O7", "M6")
def test_a_trace_of_a_cache_that_evicts_its_newest_entry_fails_on_m6(tmp_path: Path) -> None:
    path = tmp_path / "wrong.trace.jsonl"
    with TraceRecorder(str(path), "metadata-cache", {"ttl_seconds": -1, "max_entries": 2}) as recorder:
        cache = recorder.wrap(EvictsTheNewest(-1, max_entries=2, clock=time.monotonic))
        start = threading.Barrier(4)

        def evicts() -> None:  # full at b; c evicts b (the newest) instead of a: a stays, wrongly
            start.wait()
            for key in ("a", "b", "c"):
                cache.add(key)
            assert cache.contains("a")

        def reads(thread: int) -> None:  # other keys only: nothing these calls do changes a, b or c
            start.wait()
            for i in range(200):
                cache.contains(f"other-{thread}-{i % 3}")

        threads = [threading.Thread(target=evicts)] + [
            threading.Thread(target=reads, args=(t,)) for t in (1, 2, 3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    result = check_trace("metadata-cache", str(path))
    assert result.verdict == "FAIL" and result.clauses[0] == "M6", result.summary()
    ops = [json.loads(line.split(": ", 1)[1])["op"] for line in result.counterexample]
    assert ops == ["add", "add", "add", "contains"], result.summary()


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.clauses("O9", "B1")
def test_answers_and_exceptions_pass_through_and_are_written(tmp_path: Path) -> None:
    out = io.StringIO()
    recorder = TraceRecorder(
        out, "existence-cache", {"max_entries": 4}, declare={"bound": "global"}, flush_every=2
    )
    cache = recorder.wrap(StorageExistenceCache(4))
    cache.add("p", (h for h in ["h1", "h2"]))  # a generator: the cache must still see both hashes
    assert cache.contains_all("p", ["h1", "h2"]) is True
    assert len(out.getvalue().splitlines()) == 3, "written by the call that filled the batch of 2"
    with pytest.raises(ValueError, match="keep_pages"):
        cache.invalidate_beyond("p", ["h1"], -1)
    assert cache.covers_all("p", ["h1", "h7"], extra_cover=iter(["h7"])) is True  # bound to its position
    assert len(cache) == 2
    assert cache.max_entries == 4  # not callable: passed through, not recorded
    recorder.close()
    header, *calls = _lines(out.getvalue())
    assert header == {
        "format": "hicache-trace/1",
        "component": "existence-cache",
        "config": {"max_entries": 4},
        "declare": {"bound": "global"},
    }
    assert [c["op"] for c in calls] == ["add", "contains_all", "invalidate_beyond", "covers_all", "len"]
    assert calls[3]["args"] == ["p", ["h1", "h7"], ["h7"]]
    assert calls[0]["args"] == ["p", ["h1", "h2"]] and calls[0]["result"] is None
    assert calls[2]["error"] == "ValueError" and "result" not in calls[2]
    assert all(c["invoke"] <= c["return"] for c in calls)
    trace = tmp_path / "e.jsonl"
    trace.write_text(out.getvalue())
    assert check_trace("existence-cache", str(trace)).verdict == "PASS"


@pytest.mark.clauses("O9", "P2", "P4")
def test_the_pools_of_a_registry_are_recorded_as_pool_calls(tmp_path: Path) -> None:
    path = tmp_path / "pools.jsonl"
    with TraceRecorder(str(path), "pool-beliefs", {"max_entries": 2}) as recorder:
        registry = recorder.wrap(PooledExistenceCache(2))
        pool = registry.pool("a")
        pool.add(["h1", "h2", "h3"])
        pool.track_inflight(["h9"])
        assert pool.covered(["h2", "h9"]) is True
        assert len(registry.pool("b")) == 0
        registry.clear_inflight()
    calls = _lines(path.read_text())[1:]
    assert [c["op"] for c in calls] == [
        "pool.add",
        "pool.track_inflight",
        "pool.covered",
        "pool.len",
        "clear_inflight",
    ]
    assert calls[0]["args"] == ["a", ["h1", "h2", "h3"]]
    assert check_trace("pool-beliefs", str(path)).verdict == "PASS"


def test_bad_settings_are_refused_naming_the_parameter() -> None:
    with pytest.raises(TypeError, match="component"):
        TraceRecorder(io.StringIO(), "", {})
    with pytest.raises(TypeError, match="clock"):
        TraceRecorder(io.StringIO(), "metadata-cache", {}, clock=3.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="flush_every"):
        TraceRecorder(io.StringIO(), "metadata-cache", {}, flush_every=0)
