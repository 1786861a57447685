"""What issue 12's checks cost: ``exists``/``get``/``set`` against the code before it, in one run (S1-S8).

The store of commit ``BEFORE`` (the last one before issue 12 touched ``hicache/``) is extracted with
``git archive`` into a temp directory as the package ``hicache_before``, and both stores run the same
loops on the local disk, interleaved round by round:

* ``exists()`` of a believed key (metadata cache on): target unchanged (it makes no filesystem call);
* ``get()`` of a 64 KiB page (``O_NOFOLLOW | O_NONBLOCK`` and an ``fstat`` check now): target <= 1.1x;
* ``set()`` of a new 64 KiB page (``0600`` with ``fchmod``, ``O_NOFOLLOW``): target <= 1.1x.

Without git or that commit (an exported tarball) the section says so and measures nothing.
Directories live under ``/tmp`` and are removed at the end.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._harness import compare
from hicache.file_store import HiCacheFile

BEFORE = "165900613128f11c2a39c62036c24638266dfc15"
VALUE = b"v" * (64 * 1024)
KEYS = 1024
ROOT = Path(__file__).resolve().parent.parent


def _before_class(where: str) -> Any:
    """``HiCacheFile`` as of ``BEFORE``, imported as ``hicache_before`` (None when git cannot give it)."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", BEFORE, "hicache"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    subprocess.run(["tar", "-x", "-C", where], input=archive, check=True)
    package = Path(where) / "hicache_before"
    (Path(where) / "hicache").rename(package)
    for module in package.glob("*.py"):
        text = re.sub(r"\bhicache\.", "hicache_before.", module.read_text())
        module.write_text(re.sub(r"\bfrom hicache import", "from hicache_before import", text))
    sys.path.insert(0, where)
    try:
        return importlib.import_module("hicache_before.file_store").HiCacheFile
    finally:
        sys.path.remove(where)


def run(quick: bool) -> str:
    root = tempfile.mkdtemp(prefix="hicache-bench-checks-", dir="/tmp")
    try:
        before = _before_class(root)
        if before is None:
            return "### The cost of the security checks\n\nSkipped: git cannot give commit " + BEFORE + "."
        calls, ops, rounds = (2000, 50, 3) if quick else (20000, 200, 15)
        stores: dict[str, Any] = {}
        for name, cls in (("before", before), ("now", HiCacheFile)):
            directory = os.path.join(root, name)
            os.mkdir(directory, 0o700)
            store = cls(directory, extra_config={"enable_metadata_cache": True, "metadata_ttl": 3600})
            for i in range(KEYS):
                assert store.set(f"k{i}", VALUE)
            stores[name] = store
        counter = [0]

        def exists(store: Any) -> Callable[[], object]:
            keys = [f"k{i}" for i in range(KEYS)]
            return lambda: sum(store.exists(keys[i % KEYS]) for i in range(calls))

        def get(store: Any) -> Callable[[], object]:
            return lambda: [store.get(f"k{i % KEYS}") for i in range(ops)]

        def set_new(store: Any) -> Callable[[], object]:
            def once() -> object:
                first = counter[0]
                for _ in range(ops):
                    counter[0] += 1
                    store.set(f"n{counter[0]}", VALUE)
                for n in range(first + 1, counter[0] + 1):  # not timed apart: the same for both
                    store.delete(f"n{n}")
                return None

            return once

        lines = ["### The cost of the security checks (S1-S8), against the store before it", ""]
        lines.append(
            f"Commit {BEFORE[:7]} extracted and imported beside today's code; local disk under /tmp,"
            f" metadata cache on, {rounds} rounds; `set` rows include deleting the page again."
        )
        for title, make, count, target in (
            ("believed `exists()`", exists, calls, "unchanged"),
            ("`get()` of 64 KiB", get, ops, "<= 1.1x"),
            ("`set()` of 64 KiB (new key)", set_new, ops, "<= 1.1x"),
        ):
            result = compare(
                {f"{title}, before (baseline)": make(stores["before"]), f"{title}, now": make(stores["now"])},
                count,
                baseline=f"{title}, before (baseline)",
                rounds=rounds,
            )
            ratio = result.ratio(f"{title}, now")
            lines += ["", result.table("variant"), "", f"Target {target}. Measured: **{ratio:.3f}x**."]
        return "\n".join(lines)
    finally:
        shutil.rmtree(root, ignore_errors=True)
