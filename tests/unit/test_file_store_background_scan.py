"""F8-bg: HiCacheFile with ``startup_scan="background"`` on the fake filesystem, batch by batch.

``Stepped`` is the store built without its scan's thread, three listing nodes a ``_scan_step`` (the test
hook the machine uses too); the few tests of the thread itself wait on ``wait_started`` (an event the
scan sets when it ends), never on time.
"""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from hicache import HiCacheFile
from hicache.file_startup import FileStartup
from hicache.fs import DirEntry
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, calls_during, path

BACKGROUND = {"startup_scan": "background"}


class Stepped(HiCacheFile):
    _scan_thread = False
    _scan_batch = 3


def stepped(fs: FakeFileSystem, clock: FakeClock, **config: Any) -> Stepped:
    return Stepped(DIR, namespace=NS, extra_config={**BACKGROUND, **config}, fs=fs, clock=clock)


def keys(s: HiCacheFile) -> list[str]:
    return [e.key for e in s.evictor.snapshot()]


def scan_to_the_end(s: HiCacheFile) -> int:
    steps = 1
    while s._scan_step():
        steps += 1
    return steps


def pages(fs: FakeFileSystem, count: int, size: int = 2) -> None:
    """``count`` pages k0, k1, ... of ``size`` bytes, k0 the oldest."""
    fs.mkdir(DIR)
    for i in range(count):
        fs.put(path(f"k{i}"), b"x" * size, mtime=float(i))


@pytest.mark.clauses("F8-bg", "F8")
def test_the_constructor_returns_once_the_listing_began_and_the_steps_adopt_it_oldest_first(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    pages(fs, 7)
    s, spent = calls_during(fs, lambda: stepped(fs, clock, enable_metadata_cache=True))
    assert spent.get("scandir") == 1 and keys(s) == [] and s.evictor.total == 0
    assert not s.wait_started(0)
    assert s._scan_step() and s._scan_step()  # 3 + 3 nodes: the listing may have more
    assert not s._scan_step()  # the seventh, and the end
    assert s.wait_started(0) and not s._scan_step()
    assert keys(s) == ["k6", "k3", "k4", "k5", "k0", "k1", "k2"]  # each batch before the ones before it
    assert s.evictor.total == 14
    assert believed(s) == {f"k{i}" for i in range(7)}
    s.check_invariants()


@pytest.mark.clauses("F8-bg", "V2")
def test_each_batch_goes_before_every_entry_known_so_far(fs: FakeFileSystem, clock: FakeClock) -> None:
    pages(fs, 6)
    s = stepped(fs, clock)
    assert s.set("mine", b"new")  # written during the scan: the most recently used
    s._scan_step()  # k0 k1 k2, then k3 k4 k5 (the listing is by name), each batch oldest first
    assert keys(s) == ["k0", "k1", "k2", "mine"]
    s._scan_step()
    assert keys(s) == ["k3", "k4", "k5", "k0", "k1", "k2", "mine"]


@pytest.mark.clauses("F8-bg", "C3", "F7", "F4")
@pytest.mark.parametrize("how", ["delete", "clear", "found missing"])
def test_a_page_removed_or_found_missing_during_the_scan_is_not_adopted_again(
    fs: FakeFileSystem, clock: FakeClock, how: str
) -> None:
    pages(fs, 6)
    s = stepped(fs, clock, enable_metadata_cache=True)
    s._scan_step()
    if how == "delete":
        assert s.delete("k4")
    elif how == "clear":
        assert s.clear()
    else:
        fs.remove(path("k4"))  # another process deletes it; a probe of this store finds it gone
        assert not s.exists("k4")
    scan_to_the_end(s)
    assert "k4" not in keys(s) and "k4" not in believed(s) and not s.exists("k4")
    on_disk = sum(len(f.data) for f in fs.listing(DIR).values())
    assert s.evictor.total == on_disk
    s.check_invariants()


@pytest.mark.clauses("F8-bg", "C3", "F3", "F4")
@pytest.mark.parametrize("how", ["rewritten", "read"])
def test_a_page_this_store_wrote_or_read_during_the_scan_is_counted_once(
    fs: FakeFileSystem, clock: FakeClock, how: str
) -> None:
    pages(fs, 6)
    s = stepped(fs, clock)
    if how == "rewritten":
        assert s.delete("k5") and s.set("k5", b"longer")
    else:
        assert s.get("k5") == b"xx"  # adopted by the read (V4)
    scan_to_the_end(s)
    assert keys(s).count("k5") == 1
    assert s.evictor.total == sum(len(f.data) for f in fs.listing(DIR).values())
    s.check_invariants()


@pytest.mark.clauses("F8-bg", "F6", "F4")
def test_before_the_scan_reaches_a_page_exists_and_get_find_it_on_disk(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    pages(fs, 6)
    s = stepped(fs, clock, enable_metadata_cache=True)
    found, spent = calls_during(fs, lambda: s.exists("k5"))
    assert found and spent == {"stat": 1}  # not believed yet: one probe
    assert s.get("k4") == b"xx"
    scan_to_the_end(s)
    found, spent = calls_during(fs, lambda: s.exists("k0"))
    assert found and spent == {}  # adopted, believed


@pytest.mark.clauses("F8-bg", "V3", "V6")
def test_the_cap_holds_on_what_is_known_and_a_victim_is_not_adopted_again(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 9)
    s = stepped(fs, clock, max_size=8, eviction_ratio=1.0, enable_metadata_cache=True)
    s._scan_step()
    assert keys(s) == ["k0", "k1", "k2"] and s.evictor.total == 6
    assert s.set("n1", b"1234")  # 10 bytes would be over the cap: k0 evicted (the oldest known)
    assert keys(s) == ["k1", "k2", "n1"]
    s._scan_step()  # k3 k4 k5 go first: 14 bytes, so they are evicted, the least recently used
    assert keys(s) == ["k1", "k2", "n1"] and s.evictor.total == 8
    scan_to_the_end(s)
    assert keys(s) == ["k1", "k2", "n1"] and s.evictor.total == 8
    assert sorted(fs.listing(DIR)) == sorted(f"{k}{NS}.bin" for k in keys(s))
    assert "over its limits" not in caplog.text


@pytest.mark.clauses("F8-bg", "V3", "V5")
def test_a_scan_that_cannot_meet_the_cap_says_so_once(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 9)
    for i in range(9):
        fs.fail_unlink(path(f"k{i}"), errno.EPERM)
    s = stepped(fs, clock, max_size=4, eviction_ratio=1.0)
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        scan_to_the_end(s)
    assert caplog.text.count("nothing more of what is known can be evicted") == 1
    assert s.evictor.total == 18  # every page is known and counted, though over the cap


@pytest.mark.clauses("F8-bg", "F8", "S6")
def test_the_temp_file_sweep_is_part_of_the_scan(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.mkdir(DIR)
    fs.put(f"{DIR}/.00000000000a.tmp", b"t", mtime=clock() - 4000)
    fs.put(f"{DIR}/.00000000000b.tmp", b"t", mtime=clock() - 10)
    fs.put(f"{DIR}/.other-state.tmp", b"t", mtime=clock() - 4000)
    s = stepped(fs, clock)
    assert len(fs.listing(DIR)) == 3  # the constructor removed nothing
    clock.advance(3600)  # the young one is old now, but not by the clock the listing began with
    scan_to_the_end(s)
    assert sorted(fs.listing(DIR)) == [".00000000000b.tmp", ".other-state.tmp"]


@pytest.mark.clauses("F8-bg", "S3")
def test_skipped_nodes_are_reported_once_when_the_scan_ends(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 4)
    fs.plant(path("s1"), "symlink")
    fs.plant(path("s2"), "symlink")
    s = stepped(fs, clock)
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        s._scan_step()
        assert "not pages, skipped" not in caplog.text
        scan_to_the_end(s)
    assert caplog.text.count("2 symlink node(s)") == 1 and keys(s) == ["k3", "k0", "k1", "k2"]


@pytest.mark.clauses("F8-bg", "F8")
def test_a_directory_that_cannot_be_listed_still_raises_in_the_constructor(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    fs.fail("scandir", errno.EACCES)
    with pytest.raises(PermissionError):
        stepped(fs, clock)


class _Breaks:
    """A filesystem whose listing of the directory fails after ``good`` entries (EIO midway)."""

    def __init__(self, fs: FakeFileSystem, good: int) -> None:
        self._fs, self._good = fs, good

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fs, name)

    def scandir(self, where: str) -> Iterator[DirEntry]:
        entries = self._fs.scandir(where)
        for _ in range(self._good):
            yield next(entries)
        raise OSError(errno.EIO, "EIO", where)


@pytest.mark.clauses("F8-bg", "B2")
def test_a_listing_that_fails_midway_ends_the_scan_and_keeps_what_it_adopted(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 6)
    broken: Any = _Breaks(fs, 4)
    s = Stepped(DIR, namespace=NS, extra_config=BACKGROUND, fs=broken, clock=clock)
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        assert s._scan_step() and not s._scan_step()
    assert "the start-up scan ends" in caplog.text
    assert keys(s) == ["k3", "k0", "k1", "k2"] and s.wait_started(0)
    assert s.set("k9", b"v") and s.get("k5") == b"xx"  # the store serves on; k5 is found by a probe


@pytest.mark.clauses("F8-bg", "F1-fanout")
def test_a_flat_store_still_refuses_a_fanout_namespace(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.mkdir(DIR)
    fs.put(f"{DIR}/.hicache{NS}.fanout", b"")
    with pytest.raises(ValueError, match="layout"):
        stepped(fs, clock)


@pytest.mark.clauses("F8-bg", "F1-fanout", "S6")
def test_a_fanout_store_scans_its_subdirectories_in_the_background(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    writer = HiCacheFile(DIR, namespace=NS, extra_config={"layout": "fanout"}, fs=fs, clock=clock)
    for i in range(8):
        assert writer.set(f"p{i}", b"v" * (i + 1))
    del writer
    fs.put(f"{DIR}/.00000000000a.tmp", b"t", mtime=clock() - 4000)  # in the directory itself
    s = stepped(fs, clock, layout="fanout")
    assert ".00000000000a.tmp" not in fs.listing(DIR)  # the constructor reads the directory itself
    assert keys(s) == []
    scan_to_the_end(s)
    assert sorted(keys(s)) == [f"p{i}" for i in range(8)] and s.evictor.total == 36
    fs.put(path("flat"), b"x")
    with pytest.raises(ValueError, match="layout"):
        stepped(fs, clock, layout="fanout")


@pytest.mark.clauses("F8-bg")
def test_close_stops_the_scan_and_the_store_serves_on(fs: FakeFileSystem, clock: FakeClock) -> None:
    pages(fs, 9)
    s = stepped(fs, clock)
    s._scan_step()
    s.close()
    s.close()  # idempotent
    assert s.wait_started(0) and not s._scan_step()
    assert keys(s) == ["k0", "k1", "k2"]
    assert s.get("k8") == b"xx" and keys(s) == ["k0", "k1", "k2", "k8"]
    assert s.delete("k1") and s.set("k1", b"z")
    s.check_invariants()


@pytest.mark.clauses("F8-bg", "F8")
def test_blocking_is_the_default_and_is_started_at_once(fs: FakeFileSystem, clock: FakeClock) -> None:
    pages(fs, 5)
    s = HiCacheFile(DIR, namespace=NS, fs=fs, clock=clock)
    assert s.config.startup_scan == "blocking" and s.wait_started(0) and len(keys(s)) == 5
    s.close()  # nothing to stop
    assert not s._scan_step()


@pytest.mark.clauses("F8-bg", "F9", "B1")
def test_a_bad_startup_scan_is_refused_naming_the_setting(fs: FakeFileSystem, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="startup_scan"):
        HiCacheFile(DIR, extra_config={"startup_scan": "lazy"}, fs=fs, clock=clock)


# -- the thread -------------------------------------------------------------------


@pytest.mark.clauses("F8-bg", "C3")
def test_the_thread_scans_to_the_end(fs: FakeFileSystem, clock: FakeClock) -> None:
    pages(fs, 50)
    s = HiCacheFile(DIR, namespace=NS, extra_config=BACKGROUND, fs=fs, clock=clock)
    assert s.wait_started(timeout=60)
    assert len(keys(s)) == 50 and s.evictor.total == 100
    s.close()


@pytest.mark.clauses("F8-bg", "C3")
def test_close_joins_the_thread_wherever_it_is_and_nothing_is_adopted_after(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    pages(fs, 20)

    class OneAtATime(HiCacheFile):
        _scan_batch = 1

    s = OneAtATime(DIR, namespace=NS, extra_config=BACKGROUND, fs=fs, clock=clock)
    s.close()  # however far the thread got (a step, all of them, none): it is joined
    thread = [t for t in threading.enumerate() if t.name == f"hicache-scan{NS}"]
    assert thread == [] and s.wait_started(0)
    adopted = keys(s)
    assert not s._scan_step() and keys(s) == adopted  # nothing more
    assert s.evictor.total == 2 * len(adopted)
    assert s.get("k19") == b"xx" and "k19" in keys(s)
    s.check_invariants()


@pytest.mark.clauses("F8-bg", "B2")
def test_a_bug_in_the_scan_is_logged_and_ends_it(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 5)

    class BuggyStartup(FileStartup):
        def adopt_scanned(self, scan: Any, found: Any) -> None:
            raise RuntimeError("a bug")

    class Buggy(HiCacheFile):
        startup_class = BuggyStartup

    with caplog.at_level(logging.ERROR, "hicache.file_store"):
        s = Buggy(DIR, namespace=NS, extra_config=BACKGROUND, fs=fs, clock=clock)
        assert s.wait_started(timeout=60)
    assert "the start-up scan of" in caplog.text and "a bug" in caplog.text
    assert s.get("k1") == b"xx"
