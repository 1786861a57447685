"""The warning of a second live store on one namespace (C6, B2), word for word (docs/MUTATION.md: the run
of 2026-12-01 left its message unpinned; the other tests match parts of it)."""

from __future__ import annotations

import logging

import pytest

from spec.fake_fs import FakeFileSystem
from spec.fakes import FakeClock
from tests.unit._store import store


@pytest.mark.clauses("C6", "B2")
def test_a_second_live_store_on_a_namespace_is_warned_about_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    first = store(fs, clock)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        second = store(fs, clock)
    assert caplog.messages == [
        "file store: another live store holds namespace '_m' of '/cache'"
        " (lock file '/cache/.hicache_m.lock'): each store enforces max_size on its own writes only,"
        " so this namespace can hold up to that many times the cap; give each process its own namespace"
    ]
    assert first is not second
