"""The reference store inside the engine against the engine's own ``HiCacheFile`` (issue 31; F10).

One run, one directory, each store in its own model namespace of it, the same page (a bf16 tensor of
``PAGE`` bytes), the cap (``max_size``) and the metadata cache on in both.  Four measurements, the two
stores interleaved round by round (``benchmarks/_harness.py``: medians of per-round ratios):

* ``exists`` of a believed page (target <= 1.0x the engine's);
* ``get`` of a page into a preallocated tensor (target <= 1.0x);
* ``set`` of a new page (target <= 1.2x);
* ``batch_exists`` of a 64-page chain, every page believed (target <= 1.0x).

The engine's modules come from its release wheel (``benchmarks/engine_wheel.py``); without the wheel or
torch the section says so and nothing is measured.  ``make bench-engine`` runs this alone.
"""

from __future__ import annotations

import itertools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from benchmarks import engine_wheel
from benchmarks._harness import Comparison, compare

PAGE = 32 * 1024  # bytes per page
CHAIN = 64
TARGETS = {"exists": 1.0, "get": 1.0, "set": 1.2, f"batch_exists({CHAIN})": 1.0}


def _config(storage: Any, where: str, model: str, extra: dict[str, Any]) -> Any:
    return storage.HiCacheStorageConfig(
        tp_rank=0,
        tp_size=1,
        pp_rank=0,
        pp_size=1,
        attn_cp_rank=0,
        attn_cp_size=1,
        is_mla_model=False,
        enable_storage_metrics=False,
        is_page_first_layout=True,
        model_name=model,
        extra_config={"file_storage_path": where, "enable_metadata_cache": True, "max_size": "8G", **extra},
    )


def _stores(storage: Any, directory: str) -> dict[str, Any]:
    """The engine's store and ours, in the namespaces of two models of one directory."""
    from sglang.srt.mem_cache.storage.backend_factory import StorageBackendFactory

    dynamic = {"backend_name": "reference", "module_path": "hicache_sglang"}
    dynamic["class_name"] = "HiCacheReferenceStore"
    return {
        "engine HiCacheFile": storage.HiCacheFile(_config(storage, directory, "bench/engine", {}), directory),
        "HiCacheReferenceStore": StorageBackendFactory.create_backend(
            "dynamic", _config(storage, directory, "bench/reference", dynamic), None
        ),
    }


def _measure(stores: dict[str, Any], torch: Any, quick: bool) -> dict[str, Comparison]:
    n = 64 if quick else 512
    rounds = 5 if quick else 15
    value = torch.randn(PAGE // 2).to(torch.bfloat16)
    keys = [f"{i:064x}" for i in range(n)]
    for store in stores.values():
        assert all(store.set(key, value) for key in keys)
        assert store.batch_exists(keys) == n
    fresh = itertools.count()
    results: dict[str, Comparison] = {}

    def exists(store: Any) -> Callable[[], object]:
        return lambda: [store.exists(key) for key in keys]

    def get(store: Any) -> Callable[[], object]:
        target = torch.empty_like(value)
        return lambda: [store.get(key, target) for key in keys]

    def set_new(store: Any) -> Callable[[], object]:
        def run() -> None:
            start = next(fresh) * n
            for i in range(start, start + n):
                store.set(f"{i:x}f", value)

        return run

    def batch_exists(store: Any) -> Callable[[], object]:
        chains = [keys[i : i + CHAIN] for i in range(0, n - CHAIN + 1, CHAIN)]
        return lambda: [store.batch_exists(chain) for chain in chains]

    cases: list[tuple[str, Callable[[Any], Callable[[], object]], int]] = [
        ("exists", exists, n),
        ("get", get, n),
        ("set", set_new, n),
        (f"batch_exists({CHAIN})", batch_exists, n // CHAIN),
    ]
    for name, make, ops in cases:
        variants = {label: make(store) for label, store in stores.items()}
        results[name] = compare(variants, ops, baseline="engine HiCacheFile", rounds=rounds)
    return results


def run(quick: bool) -> str:
    lines = ["## The reference store inside the engine (F10)", ""]
    try:
        import torch

        storage = engine_wheel.load_engine_storage()
    except (ImportError, engine_wheel.WheelUnavailable) as error:
        return "\n".join([*lines, f"Not measured: {error}"])
    sys.modules.pop("hicache_sglang", None)
    sys.modules.pop("hicache_sglang.reference_store", None)
    directory = tempfile.mkdtemp(prefix="hicache-bench-engine-", dir="/tmp")
    started = time.perf_counter()
    try:
        results = _measure(_stores(storage, directory), torch, quick)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        engine_wheel.unload_engine_storage()
    lines += [
        "`HiCacheReferenceStore` (built by the engine's factory as `dynamic`) against the engine's"
        f" `HiCacheFile` (sglang {engine_wheel.wheel().name.split('-')[1]}), one directory, a model namespace"
        f" each; pages of {PAGE // 1024} KiB (bf16), `max_size` 8G and the metadata cache on in both.",
        "",
        "| call | engine ns/op | reference ns/op | ratio (median of rounds) | target |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, comparison in results.items():
        ratio = comparison.ratio("HiCacheReferenceStore")
        target = TARGETS[name]
        lines.append(
            f"| {name} | {comparison.median_ns('engine HiCacheFile'):.0f} |"
            f" {comparison.median_ns('HiCacheReferenceStore'):.0f} | {ratio:.3f} |"
            f" <= {target} {'met' if ratio <= target else 'NOT met'} |"
        )
    lines += ["", f"Directory under `/tmp`, removed afterwards; total {time.perf_counter() - started:.0f} s."]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run("--quick" in sys.argv))
