"""Entry points of the child processes of the real-filesystem tests (importable, for "spawn").

Each child reports over a ``multiprocessing`` connection and never sleeps: it
waits only on pipes and barriers, which the parent drives with bounded timeouts.
"""

from __future__ import annotations

import os
import time
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any

from hicache.file_store import HiCacheFile
from hicache.fs import OSFileSystem

__all__ = [
    "FOREIGN_VALUE_SIZE",
    "VALUE_SIZE",
    "content",
    "create_directory_and_write",
    "delete_key",
    "namespace_worker",
    "same_namespace_worker",
    "write_then_get_killed",
]

VALUE_SIZE = 1000
FOREIGN_VALUE_SIZE = 64 * 1024
# Seconds a child waits at a barrier for its siblings: "spawn" starts each child as a fresh interpreter,
# which on a loaded machine can take many seconds; only a sibling that never starts should reach it.
BARRIER_TIMEOUT = 120.0


def content(namespace: str, key: str, size: int = VALUE_SIZE) -> bytes:
    """The value a process writes under ``key`` in ``namespace``: recognizable, whole or not at all."""
    stamp = f"<{namespace}|{key}>".encode()
    return (stamp * (size // len(stamp) + 1))[:size]


def namespace_worker(conn: Connection, barrier: Barrier, directory: str, namespace: str, clear: bool) -> None:
    """F1: churn one namespace (a cap of 4 values forces evictions, deletes, reads), optionally clear it.

    Reports ``{"errors": [...], "keys": [keys tracked at the end], "total": bytes tracked}``.
    """
    barrier.wait(timeout=BARRIER_TIMEOUT)  # every worker starts (and scans the directory) at once
    store = HiCacheFile(directory, namespace=namespace, extra_config={"max_size": 4 * VALUE_SIZE})
    errors: list[str] = []
    keys = [f"k{i}" for i in range(24)]  # the same key names in every namespace
    for round_ in range(3):
        for i, key in enumerate(keys):
            if not store.set(key, content(namespace, key)):
                errors.append(f"set({key}) refused")
            got = store.get(keys[(i * 7 + round_) % len(keys)])
            if got is not None and got != content(namespace, keys[(i * 7 + round_) % len(keys)]):
                errors.append(f"get read another value: {got[:40]!r}")
            if i % 5 == 0:
                store.delete(keys[(i + 3) % len(keys)])
    if clear and not store.clear():
        errors.append("clear() could not remove everything")
    store.check_invariants()
    snapshot = store.evictor.snapshot()
    conn.send({"errors": errors, "keys": sorted(e.key for e in snapshot), "total": store.evictor.total})
    conn.close()


def same_namespace_worker(conn: Connection, barrier: Barrier, directory: str, seed: int) -> None:
    """C2/C4 among processes: set/get/delete/exists of the same keys in one namespace, values per key.

    Every value depends on the key only (as content-addressed pages do), so any
    read must return that value whole or nothing.  Reports ``{"errors": [...]}``.
    """
    barrier.wait(timeout=BARRIER_TIMEOUT)
    store = HiCacheFile(directory, namespace="_shared")
    errors: list[str] = []
    keys = [f"page{i}" for i in range(6)]
    buffer = bytearray(FOREIGN_VALUE_SIZE)
    for i in range(300):
        key = keys[(i * 5 + seed * 3) % len(keys)]
        expected = content("_shared", key, FOREIGN_VALUE_SIZE)
        op = (i + seed) % 5
        if op == 0 and not store.set(key, expected):
            errors.append(f"set({key}) failed")
        elif op == 1:
            got = store.get(key)
            if got is not None and got != expected:
                errors.append(f"get({key}) returned {len(got)} bytes that are not its value")
        elif op == 2 and store.get_into(key, buffer) and buffer != expected:
            errors.append(f"get_into({key}) filled another value")
        elif op == 3:
            store.delete(key)
        elif op == 4:
            store.exists(key)
    store.check_invariants()
    conn.send({"errors": errors})
    conn.close()


def delete_key(conn: Connection, directory: str, namespace: str, key: str) -> None:
    """Another process removes one key of the namespace through its own store."""
    store = HiCacheFile(directory, namespace=namespace)
    conn.send(
        {
            "deleted": store.delete(key),
            "exists": os.path.exists(os.path.join(directory, f"{key}{namespace}.bin")),
        }
    )
    conn.close()


def create_directory_and_write(conn: Connection, barrier: Barrier, directory: str, index: int) -> None:
    """F8: all children construct a store on the same missing directory at once, then write to it."""
    barrier.wait(timeout=BARRIER_TIMEOUT)
    try:
        store = HiCacheFile(directory, namespace=f"_p{index}")
        written = store.set("page", content(f"_p{index}", "page"))
    except OSError as exc:
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    else:
        conn.send({"error": None, "written": written})
    conn.close()


class _PausingFileSystem(OSFileSystem):
    """The OS port, except that the write of ``victim`` stops at ``stage`` and waits forever for the parent.

    ``mid-write``: half the value is in the temp file; ``before-rename``: the
    temp file is whole but not renamed; ``after-rename``: the key is published.
    At the stage it sends ``("paused", temp path)`` and blocks on the pipe; the
    parent then kills the process with SIGKILL.
    """

    __slots__ = ("_armed", "_conn", "_stage")

    def __init__(self, conn: Connection, stage: str) -> None:
        self._conn = conn
        self._stage = stage
        self._armed = False

    def arm(self) -> None:
        self._armed = True

    def _pause(self, temp: str) -> None:
        self._conn.send(("paused", temp))
        self._conn.recv()  # never answered: the parent kills us here
        raise AssertionError("the parent was meant to kill this process")

    def write_new(self, path: str, data: memoryview, mode: int = 0o600) -> None:
        if not (self._armed and self._stage == "mid-write"):
            super().write_new(path, data, mode)
            return
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        half = len(data) // 2
        done = 0
        while done < half:
            done += os.write(fd, data[done:half])
        os.fsync(fd)
        self._pause(path)

    def replace(self, src: str, dst: str) -> None:
        if self._armed and self._stage == "before-rename":
            self._pause(src)
        super().replace(src, dst)
        if self._armed and self._stage == "after-rename":
            self._pause(src)


def write_then_get_killed(conn: Connection, directory: str, stage: str, committed: int) -> None:
    """C4: write ``committed`` whole values (reporting each ``set`` result), then die during the next one."""
    fs = _PausingFileSystem(conn, stage)
    store = HiCacheFile(directory, namespace="_w", fs=fs)
    results: dict[str, Any] = {
        f"whole{i}": store.set(f"whole{i}", content("_w", f"whole{i}")) for i in range(committed)
    }
    conn.send(("committed", results))
    fs.arm()
    store.set("victim", content("_w", "victim", FOREIGN_VALUE_SIZE))
    conn.send(("finished", time.time()))  # only reached if the pause did not happen
