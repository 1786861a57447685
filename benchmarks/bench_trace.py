"""``--trace`` (O7) and the recorder (O9), issue 21: how long a recorded trace takes to judge, and what
recording costs a call.

* a 100,000-call trace of ``MetadataCache`` (unbounded, TTL 5 ms, 1,000 keys) from 8 threads on the real
  clock, recorded with ``hicache.trace.TraceRecorder``, judged by ``check_trace`` (target <= 5 s);
* a 10,000-call trace of a bounded one (16 entries, TTL 10 ms, 64 keys) from 4 threads (target <= 30 s, or
  UNKNOWN);
* the recorder's cost per call: ``contains`` of a live key and ``add`` of a live key through the
  recorder, against the same calls on the bare cache, rounds interleaved in the same run.

Traces are recorded with a thread switch interval of 10 us, so that the threads' calls overlap often
(what the search has to untangle).  The judging runs as the command, in a child process (benchmarks
import no checker); its CPU seconds are the child's: on a shared machine the wall clock also counts
the time other processes held the cores.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._harness import compare
from hicache import MetadataCache, TraceRecorder

ROOT = Path(__file__).resolve().parents[1]


def record(path: Path, calls: int, threads: int, ttl: float, bound: int | None, keys: int) -> None:
    """``calls`` calls of ``threads`` threads on a recorded MetadataCache (real clock), into ``path``."""
    config = {"ttl_seconds": ttl, "max_entries": bound}
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    with TraceRecorder(str(path), "metadata-cache", config) as recorder:
        cache = recorder.wrap(MetadataCache(ttl, max_entries=bound, clock=time.monotonic))
        start = threading.Barrier(threads)

        def work(thread: int) -> None:
            rng = random.Random(thread)
            start.wait()
            for _ in range(calls // threads):
                key, roll = f"k{rng.randrange(keys)}", rng.random()
                if roll < 0.4:
                    cache.add(key)
                elif roll < 0.95:
                    cache.contains(key)
                else:
                    cache.remove(key)

        workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    sys.setswitchinterval(interval)


def _overlapping(path: Path) -> int:
    """How many calls of the trace overlap a call of another thread."""
    calls = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    calls.sort(key=lambda c: c["invoke"])
    marked: set[int] = set()
    for i, call in enumerate(calls):
        for j in range(i + 1, len(calls)):
            if calls[j]["invoke"] > call["return"]:
                break
            if calls[j]["thread"] != call["thread"]:
                marked.update((i, j))
    return len(marked)


def _judge(path: Path, label: str, target: float) -> list[str]:
    """The command on the trace, in a child process: its report, wall-clock and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "spec.oracle", "metadata-cache", "--trace", str(path), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = json.loads(done.stdout)
    f = report["figures"]
    return [
        f"| {label} | {f['calls']:,} | {_overlapping(path):,} | {f['parts']:,} | {f['steps']:,} |"
        f" {report['verdict']} (exit {done.returncode}) | {f['seconds']:.2f} | {wall:.2f} | {cpu:.2f} |"
        f" <= {target:g} |"
    ]


def _bench_judging(quick: bool) -> list[str]:
    scale = 10 if quick else 1
    rows = [
        "| trace | calls | overlapping | parts | search steps | verdict | judging s (wall, as reported) |"
        " command s (wall, start-up included) | command s (CPU) | target s |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        unbounded, bounded = Path(scratch) / "unbounded.jsonl", Path(scratch) / "bounded.jsonl"
        record(unbounded, 100_000 // scale, 8, 0.005, None, 1000)
        rows += _judge(unbounded, "unbounded, 8 threads, TTL 5 ms, 1,000 keys", 5.0)
        record(bounded, 10_000 // scale, 4, 0.01, 16, 64)
        rows += _judge(bounded, "bounded (16), 4 threads, TTL 10 ms, 64 keys", 30.0)
    cores = os.cpu_count() or 1
    rows.append("")
    rows.append(
        f"Load average (1 min) before and after: {load:.1f} and {os.getloadavg()[0]:.1f} on {cores} cores:"
        " where it is above the cores, the wall clock counts the waits for a core, the CPU seconds do not."
    )
    return rows


def _bench_recorder(quick: bool) -> tuple[list[str], float]:
    calls = 2_000 if quick else 20_000
    bare = MetadataCache(3600.0)
    bare.add("live")
    with tempfile.TemporaryDirectory() as scratch:
        recorder = TraceRecorder(str(Path(scratch) / "r.jsonl"), "metadata-cache", {"ttl_seconds": 3600.0})
        recorded = recorder.wrap(MetadataCache(3600.0, clock=recorder.clock))
        recorded.add("live")

        def loop(method: Callable[[str], object]) -> Callable[[], object]:
            def run() -> object:
                call = method
                for _ in range(calls):
                    call("live")
                return None

            return run

        result = compare(
            {
                "bare contains": loop(bare.contains),
                "recorded contains": loop(recorded.contains),
                "bare add (live key)": loop(bare.add),
                "recorded add (live key)": loop(recorded.add),
            },
            calls,
            baseline="bare contains",
            rounds=5 if quick else 15,
        )
        recorder.close()
    ratio = result.ratio("recorded contains")
    rows = [
        "| call | ns/call (median) | ratio to the bare call (median of rounds) |",
        "|---|---:|---:|",
    ]
    for bare_name, recorded_name in (
        ("bare contains", "recorded contains"),
        ("bare add (live key)", "recorded add (live key)"),
    ):
        rows.append(f"| {bare_name} | {result.median_ns(bare_name):.0f} | 1.000 |")
        rows.append(
            f"| {recorded_name} | {result.median_ns(recorded_name):.0f} |"
            f" {result.ratio(recorded_name, against=bare_name):.2f} |"
        )
    return rows, ratio


def run(quick: bool) -> str:
    lines = [
        "## Traces: judging a recorded trace, and the recorder's cost (O7, O9)",
        "",
        "A trace recorded by `hicache.trace.TraceRecorder` from real threads on `MetadataCache` (real clock),"
        " judged by `python -m spec.oracle metadata-cache --trace FILE --json` in a child process:"
        " the judging's own seconds (wall-clock, from the report), the command's wall-clock and CPU seconds"
        " (interpreter start-up and reading the file included)."
        " The unbounded trace is judged key by key; the bounded one as one history.",
        "",
        *_bench_judging(quick),
        "",
        "### The recorder's cost per call (O9)",
        "",
        "One thread, a live key, the recorder writing to a file (its batched writes included), rounds"
        " interleaved with the bare calls on an identical cache:",
        "",
    ]
    rows, _ratio = _bench_recorder(quick)
    lines += rows
    return "\n".join(lines)
