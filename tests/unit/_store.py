"""What the file store unit-test modules share: one directory and namespace, a store on the fake filesystem,
its evictor's order, and the store's warning lines.

The tests are grouped by the unit of ``hicache/`` they test (``test_file_layout.py``, ``test_file_trust.py``,
``test_file_knowledge.py``, ``test_file_startup.py``, ``test_file_store.py``), through the store's public API.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import pytest

from hicache import HiCacheFile
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

DIR = "/cache"
NS = "_m"
OTHER = 2000  # another user (the fake runs as uid 1000)


def store(fs: FakeFileSystem, clock: FakeClock, namespace: str = NS, **config: Any) -> HiCacheFile:
    """A store of ``namespace`` (``NS``) in ``DIR`` on ``fs``, with ``config`` as its extra configuration."""
    return HiCacheFile(DIR, namespace=namespace, extra_config=config, fs=fs, clock=clock)


def path(key: str) -> str:
    """The file of ``key`` (keys without ``_`` or ``%``, which are escaped)."""
    return f"{DIR}/{key}{NS}.bin"


def calls(fs: FakeFileSystem) -> int:
    """How many filesystem calls ``fs`` has served so far."""
    return sum(fs.calls.values())


def calls_during(fs: FakeFileSystem, action: Callable[[], Any]) -> tuple[Any, dict[str, int]]:
    """``action()``'s answer and the filesystem calls it made, by operation (only those it made)."""
    before = dict(fs.calls)
    answer = action()
    return answer, {op: n - before.get(op, 0) for op, n in fs.calls.items() if n != before.get(op, 0)}


def order(s: HiCacheFile) -> list[str]:
    """The keys of ``s``'s evictor, in its snapshot's order."""
    return [e.key for e in s.evictor.snapshot()]


def warnings_said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The formatted warning lines of the store's logger (formatting fails loudly on a lost argument)."""
    records = [r for r in caplog.records if r.name == "hicache.file_store"]
    assert all(r.levelno == logging.WARNING for r in records)
    return [r.getMessage() for r in records]


def assert_said(caplog: pytest.LogCaptureFixture, pattern: str) -> None:
    """The store said exactly one warning line, and it matches ``pattern`` whole."""
    said = warnings_said(caplog)
    assert len(said) == 1, said
    assert re.fullmatch(pattern, said[0]), said[0]
