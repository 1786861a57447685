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

__all__ = ["FromImports", "NeverCalls", "RealDisk", "Unsupported"]


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
