"""What the file store unit-test modules share: one directory and namespace, a store on the fake filesystem.

(``test_file_store.py``, the oldest, keeps its own namespace ``_m_r0`` and helpers.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hicache import HiCacheFile
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

DIR = "/cache"
NS = "_m"


def store(fs: FakeFileSystem, clock: FakeClock, **config: Any) -> HiCacheFile:
    """A store of namespace ``NS`` in ``DIR`` on ``fs``, with ``config`` as its extra configuration."""
    return HiCacheFile(DIR, namespace=NS, extra_config=config, fs=fs, clock=clock)


def path(key: str) -> str:
    """The file of ``key`` (keys without ``_`` or ``%``, which are escaped)."""
    return f"{DIR}/{key}{NS}.bin"


def calls_during(fs: FakeFileSystem, action: Callable[[], Any]) -> tuple[Any, dict[str, int]]:
    """``action()``'s answer and the filesystem calls it made, by operation (only those it made)."""
    before = dict(fs.calls)
    answer = action()
    return answer, {op: n - before.get(op, 0) for op, n in fs.calls.items() if n != before.get(op, 0)}
