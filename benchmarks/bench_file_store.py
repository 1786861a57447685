"""HiCacheFile on the local disk against the plain os calls it replaces (issue 4 item 9; F5, F6, F8).

Four measurements, each side by side in one run:

* ``exists()`` on a believed key against ``os.path.exists`` of the same file
  (target <= 0.5x), and the filesystem calls per believed ``exists()``, counted
  through a counting proxy of the OS port (target 0, F6);
* ``batch_exists`` of 128 keys (metadata cache off, so every key is one
  ``stat``) in a directory of 1Ki files against one of 100Ki files (target
  <= 1.5x: no directory scan per query, F5);
* the start-up scan of 100Ki files (one pass, F8): files per second;
* ``set``/``get`` of 64 KiB values against a raw ``open``/``write``/``rename``
  loop and a raw ``open``/``read`` loop (ratios; no target).

Directories live under ``/tmp`` and are removed at the end.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator

from benchmarks._harness import Comparison, compare, ns_per_op
from hicache.file_store import HiCacheFile
from hicache.fs import DirEntry, FileStat, OSFileSystem

KEY_FILES = 1024
SMALL_DIR = 1024
LARGE_DIR = 100 * 1024
BATCH = 128
VALUE = 64 * 1024


class CountingFileSystem:
    """The OS port behind a proxy that counts every call by operation name."""

    def __init__(self) -> None:
        self.inner = OSFileSystem()
        self.calls: Counter[str] = Counter()

    def stat(self, path: str) -> FileStat:
        self.calls["stat"] += 1
        return self.inner.stat(path)

    def read_file(
        self, path: str, limit: int | None = None, accept: Callable[[FileStat], bool] | None = None
    ) -> tuple[int, bytes]:
        self.calls["read_file"] += 1
        return self.inner.read_file(path, limit, accept)

    def read_into(
        self,
        path: str,
        buffer: memoryview,
        limit: int | None = None,
        accept: Callable[[FileStat], bool] | None = None,
    ) -> tuple[int, int]:
        self.calls["read_into"] += 1
        return self.inner.read_into(path, buffer, limit, accept)

    def write_new(self, path: str, data: memoryview, mode: int = 0o600) -> None:
        self.calls["write_new"] += 1
        self.inner.write_new(path, data, mode)

    def replace(self, src: str, dst: str) -> None:
        self.calls["replace"] += 1
        self.inner.replace(src, dst)

    def unlink(self, path: str) -> None:
        self.calls["unlink"] += 1
        self.inner.unlink(path)

    def mkdir(self, path: str, mode: int = 0o700, gid: int | None = None) -> FileStat:
        self.calls["mkdir"] += 1
        return self.inner.mkdir(path, mode, gid)

    def resolve(self, path: str) -> str:
        self.calls["resolve"] += 1
        return self.inner.resolve(path)

    def euid(self) -> int:
        return self.inner.euid()

    def scandir(self, path: str) -> Iterator[DirEntry]:
        self.calls["scandir"] += 1
        return self.inner.scandir(path)

    def free_bytes(self, path: str) -> int:
        self.calls["free_bytes"] += 1
        return self.inner.free_bytes(path)

    def capacity_bytes(self, path: str) -> int:
        self.calls["capacity_bytes"] += 1
        return self.inner.capacity_bytes(path)

    def try_lock(self, path: str, mode: int = 0o600) -> int | None:
        self.calls["try_lock"] += 1
        return self.inner.try_lock(path, mode)

    def unlock(self, handle: int) -> None:
        self.calls["unlock"] += 1
        self.inner.unlock(handle)

    def now(self) -> float:
        self.calls["now"] += 1
        return self.inner.now()


def _keys(n: int, tag: str = "") -> list[str]:
    return [f"{tag}{i:064x}" for i in range(n)]


def _fill(directory: str, keys: list[str]) -> None:
    """Create one empty file per key the way the store names them (namespace ``""``), without the store.

    Empty files cost no data blocks: the directory, not the disk, is what these measurements are about.
    """
    for key in keys:
        os.close(os.open(os.path.join(directory, f"{key}.bin"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))


def _remove_tree(root: str) -> None:
    """``shutil.rmtree`` in inode order: on ext4, unlinking 100Ki files in directory order takes
    minutes (every unlink touches another inode table block); in inode order, seconds."""
    for directory, subdirectories, _ in os.walk(root, topdown=False):
        with os.scandir(directory) as entries:
            files = sorted(
                (entry.inode(), entry.name) for entry in entries if not entry.is_dir(follow_symlinks=False)
            )
        for _, name in files:
            os.unlink(os.path.join(directory, name))
        for name in subdirectories:
            os.rmdir(os.path.join(directory, name))
    os.rmdir(root)


def _bench_exists(root: str, quick: bool) -> list[str]:
    directory = os.path.join(root, "exists")
    keys = _keys(KEY_FILES)
    os.makedirs(directory)
    _fill(directory, keys)
    paths = [os.path.join(directory, f"{key}.bin") for key in keys]
    config = {"enable_metadata_cache": True, "metadata_ttl": 3600.0}
    store = HiCacheFile(directory, extra_config=config)
    counting_fs = CountingFileSystem()
    counted = HiCacheFile(directory, extra_config=config, fs=counting_fs)
    calls = 5_000 if quick else 50_000
    for key in keys:  # seeded by the start-up scan already; make sure every key is believed
        assert store.exists(key) and counted.exists(key)

    def probe(exists: Callable[[str], bool], names: list[str]) -> Callable[[], object]:
        def run() -> object:
            n = len(names)
            hits = 0
            for i in range(calls):
                hits += exists(names[i % n])
            assert hits == calls
            return hits

        return run

    result = compare(
        {
            "os.path.exists (baseline)": probe(os.path.exists, paths),
            "HiCacheFile.exists (believed)": probe(store.exists, keys),
        },
        calls,
        baseline="os.path.exists (baseline)",
        rounds=5 if quick else 21,
    )
    counting_fs.calls.clear()
    for i in range(calls):
        counted.exists(keys[i % len(keys)])
    fs_calls = sum(counting_fs.calls.values()) / calls
    ratio = result.ratio("HiCacheFile.exists (believed)")
    return [
        "### `exists()` on a believed key (F6)",
        "",
        f"{KEY_FILES} files, metadata cache on (TTL 3600 s), {calls} calls per variant per round.",
        "",
        result.table("variant"),
        "",
        f"Target: <= 0.5x `os.path.exists`. Measured: **{ratio:.3f}x**.",
        f"Filesystem calls per believed `exists()` (counted through the port): **{fs_calls:g}**"
        f" (target 0; calls seen: {dict(counting_fs.calls) or 'none'}).",
    ]


def _bench_batch_exists_and_scan(root: str, quick: bool) -> list[str]:
    large = LARGE_DIR // 10 if quick else LARGE_DIR
    small_dir, large_dir = os.path.join(root, "small"), os.path.join(root, "large")
    os.makedirs(small_dir)
    os.makedirs(large_dir)
    _fill(small_dir, _keys(SMALL_DIR))
    _fill(large_dir, _keys(large))
    # Start-up scan: a new store on the large directory, timed end to end (F8: one pass).
    # The baseline is the least any one pass can do: os.scandir plus one stat per entry.
    scans = 3 if quick else 5

    def raw_scan() -> object:
        with os.scandir(large_dir) as entries:
            return sum(entry.stat(follow_symlinks=False).st_size for entry in entries)

    scan = compare(
        {
            "os.scandir + stat per entry (baseline)": raw_scan,
            "new HiCacheFile (start-up)": lambda: HiCacheFile(large_dir),
        },
        large,
        baseline="os.scandir + stat per entry (baseline)",
        rounds=scans,
        warmup=1,
    )
    startup = "new HiCacheFile (start-up)"
    scan_rate = 1e9 / scan.median_ns(startup)
    # batch_exists with the metadata cache off: every key is one stat, wherever it sits in the directory.
    small_store, large_store = HiCacheFile(small_dir), HiCacheFile(large_dir)
    queries = [_keys(SMALL_DIR)[i * 8 : i * 8 + BATCH] for i in range(8)]
    for store in (small_store, large_store):
        assert all(store.batch_exists(q) == BATCH for q in queries)
    repeats = 20 if quick else 200

    def probe(store: HiCacheFile) -> Callable[[], object]:
        def run() -> object:
            for i in range(repeats):
                store.batch_exists(queries[i % len(queries)])
            return None

        return run

    result = compare(
        {
            f"batch_exists({BATCH}) in {SMALL_DIR} files (baseline)": probe(small_store),
            f"batch_exists({BATCH}) in {large} files": probe(large_store),
        },
        repeats * BATCH,
        baseline=f"batch_exists({BATCH}) in {SMALL_DIR} files (baseline)",
        rounds=5 if quick else 15,
    )
    ratio = result.ratio(f"batch_exists({BATCH}) in {large} files")
    return [
        "### `batch_exists` against directory size (F5) and the start-up scan (F8)",
        "",
        f"Metadata cache off (every key asked is one `stat`); ns/op is per key asked; {repeats} batches"
        " per variant per round.",
        "",
        result.table("variant"),
        "",
        f"Target: <= 1.5x from {SMALL_DIR} to {large} files. Measured: **{ratio:.3f}x**.",
        "",
        f"Start-up scan of {large} files (metadata cache off, {scans} rounds, page cache warm;"
        " ns/op is per file):",
        "",
        scan.table("start-up"),
        "",
        f"Measured: **{scan_rate:,.0f} files/s** ({scan.median_ns(startup) * large / 1e6:.0f} ms"
        f" per start-up), {scan.ratio(startup):.2f}x the bare pass.",
    ]


def _bench_set_get(root: str, quick: bool) -> list[str]:
    directory = os.path.join(root, "values")
    raw_dir = os.path.join(root, "raw")
    os.makedirs(raw_dir)
    store = HiCacheFile(directory)
    value = os.urandom(VALUE)
    n = 50 if quick else 200
    rounds = 5 if quick else 15
    generation = [0]

    def fresh_keys() -> list[str]:
        generation[0] += 1
        return _keys(n, f"g{generation[0]}-")

    def store_set(keys: list[str]) -> Callable[[], object]:
        def run() -> object:
            for key in keys:
                if not store.set(key, value):
                    raise RuntimeError(f"set({key!r}) failed")
            return None

        return run

    def raw_set(keys: list[str]) -> Callable[[], object]:
        def run() -> object:
            for key in keys:
                temp = os.path.join(raw_dir, f".{key}.tmp")
                with open(temp, "wb") as f:
                    f.write(value)
                os.rename(temp, os.path.join(raw_dir, f"{key}.bin"))
            return None

        return run

    def store_get(keys: list[str]) -> Callable[[], object]:
        def run() -> object:
            for key in keys:
                if store.get(key) is None:
                    raise RuntimeError(f"get({key!r}) missed")
            return None

        return run

    def raw_get(keys: list[str]) -> Callable[[], object]:
        def run() -> object:
            for key in keys:
                with open(os.path.join(raw_dir, f"{key}.bin"), "rb") as f:
                    f.read()
            return None

        return run

    names = {
        "set": ("raw open/write/rename (baseline)", "HiCacheFile.set"),
        "get": ("raw open/read (baseline)", "HiCacheFile.get"),
    }
    samples: dict[str, dict[str, list[float]]] = {op: {v: [] for v in pair} for op, pair in names.items()}
    for r in range(rounds + 1):  # round 0 is a warm-up
        keys = fresh_keys()
        variants = [
            ("set", names["set"][0], raw_set(keys)),
            ("set", names["set"][1], store_set(keys)),
            ("get", names["get"][0], raw_get(keys)),
            ("get", names["get"][1], store_get(keys)),
        ]
        if r % 2:  # alternate which side goes first; set must precede get on each side
            variants = [variants[1], variants[0], variants[3], variants[2]]
        for op, name, run in variants:
            cost = ns_per_op(run, n)
            if r:
                samples[op][name].append(cost)
        store.clear()  # untimed: keep the disk footprint to one round
        for key in keys:
            os.unlink(os.path.join(raw_dir, f"{key}.bin"))
    set_result = Comparison(names["set"][0], samples["set"])
    get_result = Comparison(names["get"][0], samples["get"])
    return [
        f"### `set`/`get` of {VALUE // 1024} KiB values against raw file calls",
        "",
        f"{n} fresh keys per variant per round, {rounds} rounds; the store runs with its defaults"
        " (no cap, metadata cache off); raw variants do no validation, accounting or error handling.",
        "",
        set_result.table("set"),
        "",
        get_result.table("get"),
        "",
        f"No target. Measured: `set` **{set_result.ratio(names['set'][1]):.2f}x**, `get`"
        f" **{get_result.ratio(names['get'][1]):.2f}x** the raw loops.",
    ]


def run(quick: bool) -> str:
    root = tempfile.mkdtemp(prefix="hicache-bench-", dir="/tmp")
    started = time.perf_counter()
    try:
        lines = ["## HiCacheFile on the local filesystem (F5, F6, F8)", ""]
        lines += [*_bench_exists(root, quick), ""]
        lines += [*_bench_batch_exists_and_scan(root, quick), ""]
        lines += _bench_set_get(root, quick)
    finally:
        _remove_tree(root)
    lines += [
        "",
        f"Directories under `/tmp`, removed afterwards; total {time.perf_counter() - started:.0f} s.",
    ]
    return "\n".join(lines)
