"""The warning of a second live store on one namespace (C6, B2), word for word (docs/MUTATION.md: the run
of 2026-12-01 left its message unpinned; the other tests match parts of it)."""

from __future__ import annotations

import gc
import logging
import weakref
from collections.abc import Iterator

import pytest

from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
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


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Python's cyclic collector off for the test: only reference counting frees a store.  A store in a
    reference cycle (its evictor holding its bound methods) would stay, lock and all, until the next
    full collection."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.clauses("C6")
@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize(
    "config",
    [
        {},
        {"enable_metadata_cache": True},
        {"enable_metadata_cache": True, "startup_scan": "background"},
        {"layout": "fanout", "max_size": 1 << 20},
    ],
    ids=["plain", "metadata cache", "background scan", "fanout with a cap"],
)
def test_a_dropped_store_lets_its_namespace_go_at_once_with_no_collection(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture, config: dict[str, object]
) -> None:
    # With the store in a cycle, the second store would be warned about a store that no one holds.
    first = store(fs, clock, **config)
    first.wait_started()
    assert first.set("k", b"v")
    gone = weakref.ref(first)
    del first
    assert gone() is None, "the store outlived its last reference"
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        second = store(fs, clock, **config)
        second.wait_started()
    assert caplog.messages == []
    assert second.exists("k")


@pytest.mark.clauses("C6")
@pytest.mark.usefixtures("collector_off")
def test_an_evictor_kept_beyond_its_store_still_reads_and_says_why_it_cannot_act(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    first = store(fs, clock)
    assert first.set("k", b"v")
    evictor = first.evictor
    del first
    assert evictor.total == 1 and [entry.key for entry in evictor.snapshot()] == ["k"]
    with pytest.raises(ReferenceError, match="the file store this evictor served is gone"):
        evictor.touch("untracked")  # adopting a file needs the store's name for it
