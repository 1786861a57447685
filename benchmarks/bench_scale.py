"""The file store at deployment scale, against the engine release's evictor from its wheel (issue 24).

Sizes: 10k, 100k and 1M page files (``--sizes`` or ``HICACHE_BENCH_SIZES``, comma-separated; ``make
bench-scale SIZES=10000,100000``).  For each size one directory is filled with empty-data pages (sparse files:
``ftruncate`` to ``PAGE`` bytes, so each reports its size but holds no data block) named as both the engine
and the store name them in the flat layout (``<64 hex>.bin``), in a temp directory on the local disk, and
removed at the end.  Every figure is measured in a fresh process (``python -m benchmarks.bench_scale --child
...``), best of ``RUNS`` processes for start-up and memory (the configurations in turn), best of 3
repeats inside one process for the operations.  The dentries and inodes are in the kernel's cache for
every run (the files were just made): these are warm start-ups, the same for both sides.

Start-up rows:

* ``engine``: the wheel's ``LRUFileEvictor`` with a cap (it scans only then: ``os.listdir``, one ``os.stat``
  per file, a list of tuples sorted by mtime, an ``OrderedDict``);
* ``store, cap``: ``HiCacheFile`` with the same cap, no metadata cache;
* ``store, cap + metadata cache``: the same with beliefs (TTL -1);
* ``store, no cap``: no limit and no metadata cache (it still tracks every page: C3).

Background start-up (F8-bg): ``store, cap`` built with ``startup_scan="background"``: the wall-clock time
until the constructor returns, and until its scan has ended (``wait_started()``), beside the blocking
constructor's; best of ``RUNS`` fresh processes.

Memory: ``peak`` is ``ru_maxrss`` after construction minus the RSS just before it; ``steady`` is the RSS
after construction and a garbage collection, minus the same baseline.  Both per page found.

Operations (a store at its cap, ``eviction_ratio`` 1.0, so each new ``set`` evicts one page): the engine's
side runs the steps its ``HiCacheFile`` takes around the wheel's evictor with plain ``os`` calls (``exists``
is ``os.path.exists``; ``set`` is that probe, ``reserve``, a temp file, ``os.replace``, ``commit``;
``batch_exists`` is ``exists`` per key up to the first miss).  The store's believed ``exists`` has the
metadata cache on; its probing ``exists`` and ``batch_exists`` have it off.  Listing: ``os.listdir`` and the
store's one pass (``OSFileSystem.scandir``, an ``lstat`` per entry) of the whole directory, per file.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_file_store import _remove_tree
from benchmarks.chart import line_chart
from benchmarks.engine_wheel import load_engine_evictor
from hicache import HiCacheFile
from hicache.fs import OSFileSystem

__all__ = ["DEFAULT_SIZES", "main", "make_pages", "run"]

HERE = Path(__file__).resolve().parent
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
PAGE = 4096  # bytes each page file reports (sparse: no data block)
RUNS = 3  # fresh processes per start-up figure (best of)
OPS = 2000  # operations per timed repeat
BATCH = 64
STARTUPS = ("engine", "store, cap", "store, cap + metadata cache", "store, no cap")
BACKGROUND = "store, cap, background scan"  # F8-bg
CHART = "scale.svg"


def key_of(i: int) -> str:
    """The i-th page key: 64 hex digits, as the engine's content hashes are."""
    return f"{i * 0x9E3779B97F4A7C15 % (1 << 256):064x}"


def make_pages(directory: str, n: int) -> None:
    """``n`` sparse page files of ``PAGE`` bytes, named ``<key>.bin``, as fast as plain ``os`` calls go."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    join, open_, truncate, close = os.path.join, os.open, os.ftruncate, os.close
    for i in range(n):
        fd = open_(join(directory, key_of(i) + ".bin"), flags, 0o600)
        truncate(fd, PAGE)
        close(fd)


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _engine_evictor(directory: str, cap: int, ratio: float = 0.9) -> Any:
    module = load_engine_evictor()
    limits = {"max_size": cap, "eviction_ratio": ratio}
    return module.LRUFileEvictor(directory, owned_suffixes=("",), tp_rank=0, extra_config=limits)


def _store(
    directory: str, cap: int, beliefs: bool, ratio: float = 0.9, background: bool = False
) -> HiCacheFile:
    config: dict[str, object] = {"max_size": cap, "eviction_ratio": ratio}
    if beliefs:
        config.update(enable_metadata_cache=True, metadata_ttl=-1)
    if background:
        config["startup_scan"] = "background"
    return HiCacheFile(directory, extra_config=config)


def _child_background(directory: str, n: int) -> dict[str, float]:
    """F8-bg: seconds until the constructor returns, and until its scan has ended (wall clock)."""
    gc.collect()
    start = time.perf_counter()
    store = _store(directory, 4 * n * PAGE, False, background=True)
    returned = time.perf_counter() - start
    assert store.wait_started()
    scanned = time.perf_counter() - start
    assert len(store.evictor) == n
    return {"returned": returned, "scanned": scanned}


def _child_startup(directory: str, n: int, which: str) -> dict[str, float]:
    if which == BACKGROUND:
        return _child_background(directory, n)
    cap = 4 * n * PAGE  # above what is there: no eviction at start-up
    build: Callable[[], object] = {
        "engine": lambda: _engine_evictor(directory, cap),
        "store, cap": lambda: _store(directory, cap, False),
        "store, cap + metadata cache": lambda: _store(directory, cap, True),
        "store, no cap": lambda: _store(directory, 0, False),
    }[which]
    if which == "engine":
        load_engine_evictor()  # its import and compilation are not the scan
    gc.collect()
    base = _rss()
    start, cpu = time.perf_counter(), time.process_time()
    built = build()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    gc.collect()
    steady = _rss()
    assert built is not None
    return {"seconds": seconds, "cpu": cpu, "peak": (peak - base) / n, "steady": (steady - base) / n}


def _best_of(run: Callable[[], object], ops: int) -> float:
    """ns per op: the best of 3 repeats of ``run`` (which performs ``ops`` operations)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter_ns()
        run()
        best = min(best, (time.perf_counter_ns() - start) / ops)
    return best


def _child_ops(directory: str, n: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    paths = [os.path.join(directory, key_of(i) + ".bin") for i in range(0, n, max(1, n // OPS))][:OPS]
    keys = [key_of(i) for i in range(0, n, max(1, n // OPS))][:OPS]
    figures["listdir ns/file"] = _best_of(lambda: os.listdir(directory), n)
    fs = OSFileSystem()
    figures["store scan ns/file"] = _best_of(lambda: sum(1 for _ in fs.scandir(directory)), n)
    figures["engine exists (os.path.exists) ns"] = _best_of(
        lambda: all(map(os.path.exists, paths)), len(paths)
    )
    figures.update(_probes(HiCacheFile(directory, extra_config={}), keys, paths))
    gc.collect()
    believing = HiCacheFile(directory, extra_config={"enable_metadata_cache": True, "metadata_ttl": -1})
    figures["store exists, believed ns"] = _best_of(lambda: all(map(believing.exists, keys)), len(keys))
    gc.collect()
    figures.update(_set_at_cap(directory, n))
    return figures


def _probes(probing: HiCacheFile, keys: list[str], paths: list[str]) -> dict[str, float]:
    """``exists`` and ``batch_exists(64)`` that each ``stat`` (no metadata cache), and the engine's."""
    figures = {"store exists, probe ns": _best_of(lambda: all(map(probing.exists, keys)), len(keys))}
    batches = [keys[i : i + BATCH] for i in range(0, len(keys) - BATCH + 1, BATCH)]
    batch_paths = [paths[i : i + BATCH] for i in range(0, len(paths) - BATCH + 1, BATCH)]

    def engine_batches() -> None:
        for batch in batch_paths:  # the engine's batch_exists: exists key by key up to the first miss
            assert all(map(os.path.exists, batch))

    figures["engine batch_exists(64) ns/key"] = _best_of(engine_batches, len(batches) * BATCH)

    def store_batches() -> None:
        for batch in batches:
            assert probing.batch_exists(batch) == BATCH

    figures["store batch_exists(64) ns/key"] = _best_of(store_batches, len(batches) * BATCH)
    return figures


def _set_at_cap(directory: str, n: int) -> dict[str, float]:
    """ns per ``set`` of a new page when the store is at its cap (each evicts the oldest page)."""
    value = bytes(PAGE)
    cap = n * PAGE
    figures = {}
    engine = _engine_evictor(directory, cap, 1.0)
    counter = [0]

    def engine_sets() -> None:
        reserve, commit = engine.reserve, engine.commit
        for _ in range(OPS):
            counter[0] += 1
            stem = f"e{counter[0]:063x}"
            path = os.path.join(directory, stem + ".bin")
            if os.path.exists(path):
                continue
            assert reserve(stem, PAGE)
            temp = os.path.join(directory, f".{os.urandom(16).hex()}.tmp")
            with open(temp, "wb") as handle:
                handle.write(value)
            os.replace(temp, path)
            commit(stem)

    figures["engine set at the cap ns"] = _best_of(engine_sets, OPS)
    set_ = _store(directory, cap, False, 1.0).set

    def store_sets() -> None:
        for _ in range(OPS):
            counter[0] += 1
            assert set_(f"s{counter[0]:063x}", value)

    figures["store set at the cap ns"] = _best_of(store_sets, OPS)
    return figures


def _spawn(args: list[str]) -> dict[str, float]:
    command = [sys.executable, "-m", "benchmarks.bench_scale", "--child", *args]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(sizes: tuple[int, ...], runs: int = RUNS, root: str | None = None) -> dict[str, dict[str, float]]:
    """Every figure at every size: {size: {figure: value}}, each start-up figure the best of ``runs``."""
    results: dict[str, dict[str, float]] = {}
    for n in sizes:
        directory = tempfile.mkdtemp(prefix=f"hicache-scale-{n}-", dir=root)
        try:
            start = time.perf_counter()
            make_pages(directory, n)
            made = time.perf_counter() - start
            print(f"  {n} pages made in {made:.1f} s", file=sys.stderr, flush=True)
            figures: dict[str, float] = {"make s": made}
            # Round robin (each run starts every configuration once): a drift of the machine or of the
            # kernel's caches over the minutes of a size reaches every configuration alike.
            bests: dict[str, dict[str, float]] = {which: {} for which in (*STARTUPS, BACKGROUND)}
            for _ in range(runs):
                for which, best in bests.items():
                    got = _spawn(["startup", directory, str(n), which])
                    for name, value in got.items():
                        best[name] = min(best.get(name, value), value)
            for which, best in bests.items():
                for name, value in best.items():
                    figures[f"{which}: {name}"] = value
                print(f"  {n} {which}: {best}", file=sys.stderr, flush=True)
            figures.update(_spawn(["ops", directory, str(n)]))
            results[str(n)] = figures
        finally:
            _remove_tree(directory)
    return results


def _label(n: str) -> str:
    value = int(n)
    return f"{value // 1_000_000}M" if value >= 1_000_000 else f"{value // 1000}k"


def tables(results: dict[str, dict[str, float]]) -> str:
    sizes = list(results)
    head = "| | " + " | ".join(_label(n) for n in sizes) + " |\n|---|" + "---:|" * len(sizes)
    rows: list[str] = []
    for figure, title in (("cpu", "CPU time of the process"), ("seconds", "wall-clock time")):
        rows += [f"**Start-up per file, {title}** (µs; ratio to the engine's evictor)", "", head]
        for which in STARTUPS:
            cells = []
            for n in sizes:
                figures = results[n]
                us = figures[f"{which}: {figure}"] / int(n) * 1e6
                ratio = figures[f"{which}: {figure}"] / figures[f"engine: {figure}"]
                cells.append(f"{us:.2f} ({ratio:.2f}x)")
            rows.append(f"| {which} | " + " | ".join(cells) + " |")
        rows.append("")
    rows += ["**Constructor wall-clock time** (s)", "", head]
    for which in STARTUPS:
        rows.append(
            f"| {which} | " + " | ".join(f"{results[n][f'{which}: seconds']:.2f}" for n in sizes) + " |"
        )
    rows += ["", '**Background start-up** (F8-bg, `store, cap` with `startup_scan="background"`)', "", head]
    rows.append(
        "| constructor returns (ms) | "
        + " | ".join(f"{results[n][f'{BACKGROUND}: returned'] * 1e3:.1f}" for n in sizes)
        + " |"
    )
    rows.append(
        "| its scan ends (s) | "
        + " | ".join(f"{results[n][f'{BACKGROUND}: scanned']:.2f}" for n in sizes)
        + " |"
    )
    rows.append(
        "| blocking constructor (s) | "
        + " | ".join(f"{results[n]['store, cap: seconds']:.2f}" for n in sizes)
        + " |"
    )
    for kind in ("peak", "steady"):
        rows += ["", f"**{kind.capitalize()} RSS per page** (bytes; ratio to the engine's evictor)", "", head]
        for which in STARTUPS:
            cells = []
            for n in sizes:
                value, engine = results[n][f"{which}: {kind}"], results[n][f"engine: {kind}"]
                cells.append(f"{value:.0f} ({value / engine:.2f}x)" if engine > 0 else f"{value:.0f}")
            rows.append(f"| {which} | " + " | ".join(cells) + " |")
    rows += ["", "**Operations** (ns per operation, or per key; best of 3 repeats in one process)", "", head]
    names = [name for name in results[sizes[0]] if name.endswith(("ns", "ns/key", "ns/file"))]
    for name in names:
        rows.append(f"| {name} | " + " | ".join(f"{results[n][name]:.0f}" for n in sizes) + " |")
    rows += ["", "Pages made in (s): " + ", ".join(f"{_label(n)} {results[n]['make s']:.1f}" for n in sizes)]
    return "\n".join(rows)


def chart(results: dict[str, dict[str, float]]) -> str:
    series = {
        f"{which} (CPU µs/file)": [
            (int(n) / 1000, results[n][f"{which}: cpu"] / int(n) * 1e6) for n in results
        ]
        for which in STARTUPS
    }
    series.update(
        {
            f"{which} (peak B/page)": [(int(n) / 1000, results[n][f"{which}: peak"]) for n in results]
            for which in ("engine", "store, cap")
        }
    )
    return line_chart(
        series,
        title="File store start-up per file (µs) and peak RSS per page (B), against the engine's evictor",
        x_label="page files in the directory (thousands)",
        y_label="µs per file / bytes per page",
    )


def section(results: dict[str, dict[str, float]], write_chart: bool) -> str:
    if write_chart:
        (HERE / CHART).write_text(chart(results))
    return "\n".join(
        [
            "## The file store at deployment scale (F8, F1-fanout)",
            "",
            f"Sparse page files of {PAGE} bytes named `<64 hex>.bin` (the flat layout), made in a temp"
            " directory on the local disk and removed after; the engine release's `LRUFileEvictor` loaded"
            f" from its wheel in the same run.  Start-up and memory: best of {RUNS} fresh processes, the"
            " configurations in turn;"
            f" operations: best of 3 repeats of {OPS} in one fresh process.  The machine is shared (2"
            " cores, other jobs running): the CPU time of the constructing process is the steadier start-up"
            " figure; the wall-clock time, which also counts waiting for a core, is shown beside it."
            "  `make bench-scale SIZES=...` re-runs this section alone.",
            "",
            tables(results),
            "",
            f"![start-up and memory against the engine]({CHART})",
        ]
    )


def _sizes(text: str | None) -> tuple[int, ...]:
    if not text:
        return DEFAULT_SIZES
    return tuple(int(part) for part in text.replace("_", "").split(",") if part.strip())


def run(quick: bool) -> str:
    """``make bench``'s section (``--quick``: 10k pages only, no chart)."""
    sizes = (10_000,) if quick else _sizes(os.environ.get("HICACHE_BENCH_SIZES"))
    return section(measure(sizes, 1 if quick else RUNS), write_chart=not quick)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scale")
    parser.add_argument("--sizes", default=os.environ.get("HICACHE_BENCH_SIZES"))
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--no-write", action="store_true", help="print only; keep RESULTS.md and the chart")
    parser.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, directory, n = args.child[0], args.child[1], int(args.child[2])
        got = _child_startup(directory, n, args.child[3]) if kind == "startup" else _child_ops(directory, n)
        print(json.dumps(got))
        return 0
    results = measure(_sizes(args.sizes), args.runs)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    text = section(results, write_chart=not args.no_write)
    print(text)
    if not args.no_write:
        _replace_section(HERE / "RESULTS.md", text)
        print(f"wrote its section of {HERE / 'RESULTS.md'} and {HERE / CHART}")
    return 0


def _replace_section(results_md: Path, text: str) -> None:
    """Put ``text`` (a ``## `` section) in place of its earlier version in ``results_md``, or at the end."""
    old = results_md.read_text() if results_md.exists() else "# Benchmark results\n"
    heading = text.splitlines()[0]
    start = old.find(heading)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    else:
        end = old.find("\n## ", start + len(heading))
        new = old[:start] + text + ("\n" + old[end:] if end >= 0 else "\n")
    results_md.write_text(new)


if __name__ == "__main__":
    sys.exit(main())
