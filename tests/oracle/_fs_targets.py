"""Evictors for tests/oracle/test_fs_control.py: how they reach the disk decides what the oracle does (O4).

Each is in SEMANTICS V's interface; the oracle must interpose its fake filesystem in this
module, or refuse the run.  Not correct evictors: only the way they touch the disk matters.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable
from os import remove
from os.path import getsize

__all__ = ["FromImports", "NaiveStore", "NeverCalls", "RealDisk", "Unsupported"]


class _Base:
    def __init__(
        self,
        directory: str,
        *,
        max_size: int,
        min_free_space: int,
        eviction_ratio: float,
        on_evict: Callable[[str], object],
    ) -> None:
        self.directory, self.cap, self.on_evict = directory, max_size, on_evict
        self.sizes: dict[str, int] = {}

    def path(self, key: str) -> str:
        return f"{self.directory}/{key}.bin"

    def unlink(self, path: str) -> None:
        remove(path)

    def reserve(self, key: str, nbytes: int) -> bool:
        while self.cap and self.sizes and sum(self.sizes.values()) + nbytes > self.cap:
            victim = next(iter(self.sizes))
            self.on_evict(victim)
            try:
                self.unlink(self.path(victim))
            except OSError:
                return False
            del self.sizes[victim]
        self.sizes[key] = nbytes
        return not self.cap or nbytes <= self.cap

    def commit(self, key: str) -> None:
        return None

    def abort(self, key: str) -> None:
        self.sizes.pop(key, None)

    def touch(self, key: str) -> None:
        if key not in self.sizes:
            with contextlib.suppress(OSError):
                self.sizes[key] = getsize(self.path(key))

    def clear(self) -> None:
        self.sizes.clear()


class FromImports(_Base):
    """Reaches the disk through ``from os import remove`` and ``from os.path import getsize``."""


class RealDisk(_Base):
    """Unlinks through an ``os`` this module does not name (a module the oracle cannot see)."""

    def unlink(self, path: str) -> None:
        importlib.import_module("os").remove(path)


class Unsupported(_Base):
    """Calls ``os.truncate``, which the fake does not provide."""

    def unlink(self, path: str) -> None:
        os.truncate(path, 0)


class NeverCalls(_Base):
    """Its module names ``os``, but it keeps sizes in memory and never calls the disk."""

    def unlink(self, path: str) -> None:
        return None

    def touch(self, key: str) -> None:
        return None


class NaiveStore:
    """A file store that calls ``open`` and ``os`` itself (no ``fs`` parameter): far from F, on the fake."""

    def __init__(
        self, storage_dir: str, namespace: str = "", extra_config: object = None, clock: object = None
    ) -> None:
        self.directory, self.namespace = storage_dir, namespace
        os.makedirs(storage_dir, exist_ok=True)

    def path(self, key: str) -> str:
        return os.path.join(self.directory, f"{key}{self.namespace}.bin")

    def set(self, key: str, value: bytes) -> bool:
        try:
            with open(self.path(key), "wb") as file:
                file.write(bytes(value))
        except OSError:
            return False
        return True

    def get(self, key: str) -> bytes | None:
        try:
            with open(self.path(key), "rb") as file:
                return bytes(file.read())
        except OSError:
            return None

    def get_into(self, key: str, buffer: bytearray) -> bool:
        data = self.get(key)
        if data is None or len(data) != len(buffer):
            return False
        buffer[:] = data
        return True

    def exists(self, key: str) -> bool:
        return os.path.exists(self.path(key))

    def batch_set(self, keys: list[str], values: list[bytes]) -> list[bool]:
        return [self.set(k, v) for k, v in zip(keys, values, strict=True)]

    def delete(self, key: str) -> bool:
        try:
            os.remove(self.path(key))
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True

    def clear(self) -> bool:
        for name in os.listdir(self.directory):
            if name.endswith(f"{self.namespace}.bin"):
                self.delete(name[: -len(f"{self.namespace}.bin")])
        return True
