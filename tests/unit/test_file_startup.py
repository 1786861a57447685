"""The store's start-up (hicache/file_startup.py): the blocking scan (F8: temp files swept, pages adopted
oldest first, the cap met at once) and the background one (F8-bg), batch by batch.

``Stepped`` is the store built without its scan's thread, three listing nodes a ``_scan_step`` (the test
hook the machine uses too); the few tests of the thread itself wait on ``wait_started`` (an event the
scan sets when it ends), never on time."""

from __future__ import annotations

import array
import errno
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hicache import HiCacheFile
from hicache.file_evictor import LRUFileEvictor
from hicache.file_layout import FileNaming
from hicache.file_startup import _CHUNK, FileStartup, _gather, _oldest_first
from hicache.file_store import escape_key
from hicache.file_trust import FileTrust
from hicache.fs import DirEntry
from spec.machines.file_store import believed
from spec.models.file_names import pages as listed_pages
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, OTHER, calls_during, path, store

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


# -- F8: start-up ---------------------------------------------------------------


@pytest.mark.clauses("F8")
def test_start_up_creates_the_directory_and_accepts_an_existing_one(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    first = HiCacheFile("/deep/nested/dir", fs=fs, clock=clock)
    second = HiCacheFile("/deep/nested/dir", fs=fs, clock=clock)  # created already: fine
    assert first.set("k", b"v") and second.get("k") == b"v"


@pytest.mark.clauses("F8", "C4")
def test_start_up_removes_only_temp_files_older_than_the_threshold(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    fs.put(f"{DIR}/.00000000000a.tmp", b"x", mtime=clock() - 3601)
    fs.put(f"{DIR}/.00000000000b.tmp", b"x", mtime=clock() - 3600)
    fs.put(f"{DIR}/.00000000000c.tmp", b"x", mtime=clock() - 10)
    store(fs, clock)
    assert set(fs.listing(DIR)) == {".00000000000b.tmp", ".00000000000c.tmp"}
    store(fs, clock, temp_max_age=5)
    assert fs.listing(DIR) == {}


@pytest.mark.clauses("F8", "C3")
def test_start_up_seeds_accounting_oldest_first_and_beliefs(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.mkdir(DIR)
    fs.put(f"{DIR}/new{NS}.bin", b"333", mtime=30)
    fs.put(f"{DIR}/old{NS}.bin", b"1", mtime=10)
    fs.put(f"{DIR}/mid{NS}.bin", b"22", mtime=20)
    fs.put(f"{DIR}/theirs_x.bin", b"4444", mtime=5)
    s = store(fs, clock, enable_metadata_cache=True)
    assert [e.key for e in s.evictor.snapshot()] == ["old", "mid", "new"]
    assert s.evictor.total == 6
    assert all(k in believed(s) for k in ("old", "mid", "new")) and "theirs_x" not in believed(s)
    assert fs.calls["scandir"] == 1 and fs.calls["stat"] == 0, "one pass over the directory"


@pytest.mark.clauses("F8")
@pytest.mark.parametrize(
    "keys",
    [
        ["b", "c", "a"],  # plain keys of one length: their order is their names' (the listing's)
        ["ab", "ab-", "ab.c", "b"],  # "ab" is a prefix of "ab-", whose name sorts first ("-" < ".")
        ["a0", "a_", "a%"],  # escaped, of one length: "a%25" and "a%5F" sort before "a0"
    ],
)
def test_start_up_orders_pages_of_one_time_in_the_listings_order_not_by_key(
    fs: FakeFileSystem, clock: FakeClock, keys: list[str]
) -> None:
    # The fake filesystem lists a directory by file name: the listing's order is the names' (F8).
    fs.mkdir(DIR)
    files = {}
    for i, key in enumerate(keys):
        name = escape_key(key) + NS + ".bin"
        fs.put(f"{DIR}/{name}", b"x" * (i + 1), mtime=7.0)
        files[name] = (b"x" * (i + 1), 7.0)
    fs.put(f"{DIR}/z{NS}.bin", b"old", mtime=1.0)  # older than all of them: first whatever its name
    files[f"z{NS}.bin"] = (b"old", 1.0)
    s = store(fs, clock)
    assert [e.key for e in s.evictor.snapshot()] == [k for _m, _n, k, _size in listed_pages(files, NS)]
    assert next(e.key for e in s.evictor.snapshot()) == "z"


@pytest.mark.clauses("F8")
@settings(max_examples=300, deadline=None)
@given(mtimes=st.lists(st.sampled_from([1.0, 2.0, 3.0]) | st.floats(0, 100, allow_nan=False), max_size=12))
def test_the_start_up_order_is_oldest_time_first_ties_in_the_listings_order(mtimes: list[float]) -> None:
    listed = array.array("d", mtimes)
    order = _oldest_first(listed)
    assert sorted(order) == list(range(len(mtimes)))
    assert [(mtimes[i], i) for i in order] == sorted((m, i) for i, m in enumerate(mtimes))


@pytest.mark.clauses("F8", "V3")
def test_start_up_over_the_cap_evicts_at_once(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.mkdir(DIR)
    for i in range(10):
        fs.put(f"{DIR}/k{i}{NS}.bin", b"x" * 10, mtime=i)
    s = store(fs, clock, max_size=50, eviction_ratio=0.5, enable_metadata_cache=True)
    assert [e.key for e in s.evictor.snapshot()] == ["k8", "k9"]
    assert "k0" not in believed(s) and not s.exists("k0")
    assert len(fs.listing(DIR)) == 2


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


@pytest.mark.clauses("F8", "S6")
def test_start_up_removes_old_temp_files_only_not_files_that_merely_look_half_like_one(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """A temp file is exactly ``.<12 hex digits>.tmp`` (S6).  Another program's ``notes.tmp``,
    ``.profile`` or ``.abc.tmp`` in the same directory is not ours to remove, however old."""
    fs.mkdir(DIR)
    old = clock() - 10 * 3600
    for name in (".0123456789ab.tmp", ".abc.tmp", "notes.tmp", ".profile", ".x.bin", ".0123456789AB.tmp"):
        fs.put(f"{DIR}/{name}", b"x", mtime=old)
    store(fs, clock)
    assert set(fs.listing(DIR)) == {".abc.tmp", "notes.tmp", ".profile", ".x.bin", ".0123456789AB.tmp"}


# -- S6: only our own temporaries --------------------------------------------------------------------


@pytest.mark.clauses("S6", "F8")
def test_start_up_removes_only_old_temp_files_of_the_exact_pattern_that_this_user_owns(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir(DIR, mode=0o700)
    old = clock() - 2 * 3600
    fs.put(f"{DIR}/.0123456789ab.tmp", b"ours, crashed", mtime=old)
    fs.put(f"{DIR}/.other-program-state.tmp", b"not ours", mtime=old)
    fs.put(f"{DIR}/.ba9876543210.tmp", b"another user's", mtime=old, uid=OTHER)
    fs.plant(f"{DIR}/.aaaaaaaaaaaa.tmp", "symlink")
    fs.put(f"{DIR}/.fedcba987654.tmp", b"a live writer's", mtime=clock() - 10)
    store(fs, clock)
    assert set(fs.listing(DIR)) == {".other-program-state.tmp", ".fedcba987654.tmp"}
    assert set(fs.others(DIR)) == {".ba9876543210.tmp", ".aaaaaaaaaaaa.tmp"}


@pytest.mark.clauses("F8-bg", "B2")
def test_a_bug_in_the_scan_is_logged_word_for_word_with_its_traceback(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 2)

    class BuggyStartup(FileStartup):
        def adopt_scanned(self, scan: Any, found: Any) -> None:
            raise RuntimeError("a bug")

    class Buggy(HiCacheFile):
        startup_class = BuggyStartup

    with caplog.at_level(logging.ERROR, "hicache.file_store"):
        s = Buggy(DIR, namespace=NS, extra_config=BACKGROUND, fs=fs, clock=clock)
        assert s.wait_started(timeout=60)
    [record] = [r for r in caplog.records if r.name == "hicache.file_store"]
    assert record.getMessage() == (
        "file store: the start-up scan of '/cache' failed; the pages it has not adopted stay unknown until a"
        " probe finds them"
    )
    assert record.exc_info is not None and str(record.exc_info[1]) == "a bug"
    assert s.get("k1") == b"xx"  # the store answers all the same, by probing


# -- the lines the scans say, word for word; the fanout marker -----------------------------------


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hicache.file_store"]


@pytest.mark.clauses("F8-bg", "V3", "V5", "B2")
def test_a_scan_that_cannot_meet_the_cap_says_so_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 4)
    for i in range(4):
        fs.fail_unlink(path(f"k{i}"), errno.EPERM)
    s = stepped(fs, clock, max_size=4, eviction_ratio=1.0)
    caplog.clear()
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        scan_to_the_end(s)
    assert (
        "file store: '/cache' is over its limits and nothing more of what is known can be evicted; the"
        " start-up scan goes on (the namespace may exceed the cap by the bytes not scanned)"
    ) in _said(caplog)


@pytest.mark.clauses("F8-bg", "B2")
def test_a_listing_that_fails_midway_is_named_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 6)
    broken: Any = _Breaks(fs, 4)
    s = Stepped(DIR, namespace=NS, extra_config=BACKGROUND, fs=broken, clock=clock)
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        assert s._scan_step() and not s._scan_step()
    assert _said(caplog) == [
        "file store: cannot list '/cache' on; the start-up scan ends: [Errno 5] EIO: '/cache'"
    ]
    assert keys(s) == ["k3", "k0", "k1", "k2"] and s.wait_started(0)  # what it adopted stays
    assert s.set("k9", b"v") and s.get("k5") == b"xx"  # the store serves on; k5 is found by a probe


@pytest.mark.clauses("F1-fanout", "F8", "B1")
def test_a_fanout_store_refuses_flat_pages_of_its_namespace_counting_only_its_own(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    fs.put(path("a"), b"1")
    fs.put(path("b"), b"2")
    fs.put(path("c"), b"3", uid=2000)  # a stranger's: not a page of ours (S3)
    with pytest.raises(ValueError) as refused:
        store(fs, clock, layout="fanout")
    assert str(refused.value) == (
        "storage directory /cache holds 2 page(s) of namespace '_m' in the flat layout, but this store's"
        " layout is 'fanout' (setting layout, HICACHE_FILE_LAYOUT): open it with layout='flat', or move the"
        " pages into their fanout subdirectories first"
    )


@pytest.mark.clauses("F1-fanout", "S2")
def test_the_fanout_marker_is_made_once(fs: FakeFileSystem, clock: FakeClock) -> None:
    _, spent = calls_during(fs, lambda: store(fs, clock, layout="fanout"))
    assert spent.get("write") == 1 and ".hicache_m.fanout" in fs.listing(DIR), spent
    _, spent = calls_during(fs, lambda: store(fs, clock, layout="fanout"))
    assert "write" not in spent, spent  # there already: not made again


@pytest.mark.clauses("F1-fanout", "B2")
def test_a_marker_that_cannot_be_made_is_named_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs.mkdir(DIR)
    fs.fail("write", errno.EACCES)
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        s = store(fs, clock, layout="fanout")
    assert _said(caplog) == [
        "file store: cannot make the layout marker '/cache/.hicache_m.fanout': [Errno 13] EACCES:"
        " '/cache/.hicache_m.fanout'"
    ]
    assert s.set("k", b"v")  # the fanout store works all the same


@pytest.mark.clauses("F1-fanout", "B2")
def test_a_marker_that_cannot_be_looked_for_is_named_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs.mkdir(DIR)
    fs.fail("stat", errno.EIO)
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        s = stepped(fs, clock)  # the background scan looks for it with one stat
    assert _said(caplog) == [
        "file store: cannot look for the layout marker '/cache/.hicache_m.fanout': [Errno 5] EIO:"
        " '/cache/.hicache_m.fanout'"
    ]
    assert s.set("k", b"v")


@pytest.mark.clauses("F8-bg", "S3", "B2")
def test_skipped_nodes_are_counted_over_every_batch_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pages(fs, 2)
    for i in range(4):
        fs.plant(path(f"s{i}"), "symlink")
    s = stepped(fs, clock)
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        scan_to_the_end(s)
    assert _said(caplog) == [
        "file store: 4 symlink node(s) named like pages of namespace '_m' in '/cache': not pages, skipped"
    ]


@pytest.mark.clauses("F1-fanout", "F8", "F8-bg", "S6")
@pytest.mark.parametrize("background", [False, True])
def test_a_fanout_scan_adopts_no_page_that_does_not_hash_where_it_lies_and_sweeps_the_leaves_temp_files(
    fs: FakeFileSystem, clock: FakeClock, background: bool
) -> None:
    writer = store(fs, clock, layout="fanout")
    assert writer.set("a", b"v")  # 39/5c
    del writer
    fs.put(f"{DIR}/39/5c/d_m.bin", b"misplaced")  # d's page hashes to 6b/64
    fs.put(f"{DIR}/39/5c/.00000000000a.tmp", b"t", mtime=clock() - 4000)
    s = stepped(fs, clock, layout="fanout") if background else store(fs, clock, layout="fanout")
    scan_to_the_end(s)
    assert keys(s) == ["a"] and s.evictor.total == 1
    assert set(fs.listing(f"{DIR}/39/5c")) == {"a_m.bin", "d_m.bin"}


# -- F8: a listing read a chunk at a time ----------------------------------------------


@pytest.mark.clauses("F8")
@pytest.mark.parametrize("order", [[], [0], [1, 0], [2, 0, 1]])
def test_gather_answers_the_items_at_the_indices_in_order(order: list[int]) -> None:
    assert list(_gather(order)(["a", "b", "c"])) == [["a", "b", "c"][i] for i in order]
    # From two indices on, one C-level call per list (F8 at scale): an itemgetter, not a step per item.
    assert isinstance(_gather(order), itemgetter) == (len(order) >= 2)


@pytest.mark.clauses("F8", "S3", "F1")
def test_a_listing_over_several_chunks_is_scanned_as_one(fs: FakeFileSystem, clock: FakeClock) -> None:
    pages = 2 * _CHUNK + 7
    for i in range(pages):
        fs.put(f"/cache/{i:05x}.bin", b"v" * (1 + i % 3), mtime=50.0 - i)  # listed newest first
        fs.put(f"/cache/{i:05x}_other.bin", b"o")  # another namespace's, in every chunk
    fs.put("/cache/foreign.bin", b"f", uid=fs.uid + 1)  # S3: not a page of this user's
    fs.plant("/cache/link.bin", "symlink")
    fs.put("/cache/.0123456789ab.tmp", b"t", mtime=-1e6)  # an old temp file: removed
    store = HiCacheFile("/cache", extra_config={"max_size": 10 * pages}, fs=fs, clock=clock)
    assert len(store.evictor) == pages
    assert store.evictor.total == sum(1 + i % 3 for i in range(pages))
    oldest = [entry[0] for entry in store.evictor.snapshot()[:3]]
    assert oldest == [f"{i:05x}" for i in (pages - 1, pages - 2, pages - 3)]  # oldest mtime first
    assert ".0123456789ab.tmp" not in fs.listing("/cache")


# -- the listings let go of, the thread stopped and joined, the marker's mode ------------------------


class _Lazy:
    """A filesystem whose listings are generators, as ``OSFileSystem.scandir``'s: the directory is opened
    at the first entry read, and held until the listing is exhausted or closed.  ``closed`` records each
    listing closed before its end, with whether ``store``'s start-up was complete by then."""

    def __init__(self, fs: FakeFileSystem) -> None:
        self._fs = fs
        self.store: HiCacheFile | None = None
        self.closed: list[tuple[str, bool]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fs, name)

    def scandir(self, where: str) -> Iterator[DirEntry]:
        try:
            yield from self._fs.scandir(where)
        except GeneratorExit:
            self.closed.append((where, self.store is not None and self.store.wait_started(0)))
            raise


@pytest.mark.clauses("F8-bg", "F8")
def test_a_listing_that_fails_at_its_first_entry_raises_in_the_constructor(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    # The OS port opens the directory at the first entry read: the constructor reads one to begin it.
    fs.mkdir(DIR)
    fs.fail("scandir", errno.EACCES)
    lazy: Any = _Lazy(fs)
    with pytest.raises(PermissionError):
        Stepped(DIR, namespace=NS, extra_config=BACKGROUND, fs=lazy, clock=clock)


@pytest.mark.clauses("F8-bg", "F1-fanout")
@pytest.mark.parametrize("layout", ["flat", "fanout"])
def test_a_scan_stopped_midway_lets_go_of_its_listing_before_start_up_is_complete(
    fs: FakeFileSystem, clock: FakeClock, layout: str
) -> None:
    if layout == "fanout":
        writer = store(fs, clock, layout="fanout")
        for i in range(8):  # 8 leaves: the walk is inside a first-level subdirectory after a batch of 3
            assert writer.set(f"p{i}", b"v")
        del writer
    else:
        pages(fs, 9)
    lazy: Any = _Lazy(fs)
    s = Stepped(DIR, namespace=NS, extra_config={**BACKGROUND, "layout": layout}, fs=lazy, clock=clock)
    lazy.store = s
    assert s._scan_step() and lazy.closed == []
    s.close()
    assert s.wait_started(0) and len(keys(s)) == 3
    [(where, complete)] = lazy.closed  # the one listing open: the directory's, or a first-level one's
    assert not complete, "let go of only when the scan object was collected"
    assert where == DIR if layout == "flat" else where.startswith(f"{DIR}/") and where.count("/") == 2


@pytest.mark.clauses("F8-bg", "C3")
def test_close_while_the_thread_reads_the_listing_stops_it_after_that_batch_and_joins_it(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The overlap is made by construction: the listing holds the thread at its fourth entry (in its second
    batch of two) until ``close`` is joining it."""
    pages(fs, 6)
    reached, go = threading.Event(), threading.Event()

    class Holding(_Lazy):
        def scandir(self, where: str) -> Iterator[DirEntry]:
            for i, entry in enumerate(super().scandir(where)):
                if i == 3:
                    reached.set()
                    go.wait(timeout=60)  # only so that a broken close cannot hang the run
                yield entry

    class TwoAtATime(HiCacheFile):
        _scan_batch = 2

    holding: Any = Holding(fs)
    s = TwoAtATime(DIR, namespace=NS, extra_config=BACKGROUND, fs=holding, clock=clock)
    try:
        assert reached.wait(timeout=60)
        [thread] = [t for t in threading.enumerate() if t.name == f"hicache-scan{NS}"]
        assert thread.daemon and thread.is_alive() and not s.wait_started(0)
        join = thread.join

        def joining(timeout: float | None = None) -> None:
            go.set()  # close has asked the scan to stop: the thread may read on
            join(timeout)

        monkeypatch.setattr(thread, "join", joining)
        s.close()
        assert go.is_set() and not thread.is_alive(), "close returned without joining the thread"
    finally:
        go.set()
    assert s.wait_started(0)
    assert keys(s) == ["k2", "k3", "k0", "k1"]  # the batch under way finished, none after it
    assert not s._scan_step() and keys(s) == ["k2", "k3", "k0", "k1"]
    assert s.get("k5") == b"xx"  # found by a probe
    s.check_invariants()


@pytest.mark.clauses("F1-fanout", "S1", "S2")
@pytest.mark.parametrize(("group", "mode"), [(None, 0o600), (0, 0o660)])
def test_the_fanout_marker_has_the_mode_of_the_stores_files(
    fs: FakeFileSystem, clock: FakeClock, group: int | None, mode: int
) -> None:
    shared: dict[str, Any] = {} if group is None else {"shared_group": group}
    store(fs, clock, layout="fanout", **shared)
    assert fs.stat(f"{DIR}/.hicache{NS}.fanout").mode == mode  # with a shared group, its members read it


@pytest.mark.clauses("F1-fanout")
def test_a_node_of_any_kind_at_the_markers_name_is_the_marker_and_is_not_made_again(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    fs.plant(f"{DIR}/.hicache{NS}.fanout", "dir")
    _, spent = calls_during(fs, lambda: store(fs, clock, layout="fanout"))
    assert "write" not in spent, spent
    with pytest.raises(ValueError, match="layout"):
        store(fs, clock)  # a flat store refuses the namespace all the same


@pytest.mark.clauses("F8")
def test_the_listing_is_read_a_chunk_at_a_time_never_held_whole(fs: FakeFileSystem, clock: FakeClock) -> None:
    asked: list[int] = []

    class Counting(FileNaming):
        def keys_of(self, names: list[str]) -> Sequence[str | None]:
            asked.append(len(names))
            return super().keys_of(names)

    class Chunked(HiCacheFile):
        naming_class = Counting

    fs.mkdir(DIR)
    for i in range(2 * _CHUNK + 7):
        fs.put(f"{DIR}/{i:05x}.bin", b"v")
    assert len(Chunked(DIR, fs=fs, clock=clock).evictor) == 2 * _CHUNK + 7
    assert asked == [_CHUNK, _CHUNK, 7]  # docs/SEMANTICS.md "F8 at scale": no copy of the listing is held


@pytest.mark.clauses("F1-fanout", "F8", "F8-bg", "S3", "B2")
@pytest.mark.parametrize("background", [False, True])
def test_misplaced_pages_and_strange_nodes_in_their_right_place_are_counted_apart_word_for_word(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture, background: bool
) -> None:
    writer = store(fs, clock, layout="fanout")
    assert writer.set("a", b"v")  # 39/5c
    del writer
    fs.put(f"{DIR}/39/5c/d_m.bin", b"misplaced")  # d's page hashes to 6b/64
    fs.put(f"{DIR}/39/5c/e_m.bin", b"misplaced")  # e's to cd/13
    fs.mkdir(f"{DIR}/c9/1d")
    fs.plant(f"{DIR}/c9/1d/s_m.bin", "symlink")  # where s's probes look, but not a page (S3)
    caplog.clear()
    with caplog.at_level(logging.WARNING, "hicache.file_store"):
        s = stepped(fs, clock, layout="fanout") if background else store(fs, clock, layout="fanout")
        scan_to_the_end(s)
    assert keys(s) == ["a"]
    assert _said(caplog) == [
        "file store: 2 misplaced node(s) named like pages of namespace '_m' in '/cache': not pages, skipped",
        "file store: 1 symlink node(s) named like pages of namespace '_m' in '/cache': not pages, skipped",
    ]


@pytest.mark.clauses("F8", "C3")
def test_start_up_hands_the_evictor_the_total_so_it_adopts_the_listing_at_once(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    # LRUFileEvictor.adopt_many: given the total of distinct keys, an empty evictor adopts them in one C call.
    totals: list[int | None] = []

    class Recording(LRUFileEvictor):
        def adopt_many(self, found: Iterable[tuple[str, int]], total: int | None = None) -> None:
            totals.append(total)
            super().adopt_many(found, total)

    class Store(HiCacheFile):
        evictor_class = Recording

    pages(fs, 4, size=3)
    s = Store(DIR, namespace=NS, fs=fs, clock=clock)
    assert totals == [12] and s.evictor.total == 12 and len(keys(s)) == 4


@pytest.mark.clauses("F8", "S3")
def test_a_trust_that_answers_too_few_page_flags_fails_start_up_and_skips_no_node_silently(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    # A variant's bug (trust_class): the nodes past its answer would go unexamined; the scan refuses it.
    class Short(FileTrust):
        def are_pages(self, nodes: list[DirEntry]) -> list[bool]:
            return super().are_pages(nodes)[:-1]

    class Store(HiCacheFile):
        trust_class = Short

    pages(fs, 2)
    fs.plant(path("s"), "symlink")  # a chunk that is not all pages: each node not a page is looked at
    with pytest.raises(ValueError, match="shorter"):
        Store(DIR, namespace=NS, fs=fs, clock=clock)
