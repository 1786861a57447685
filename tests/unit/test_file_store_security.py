"""The store on a directory that others can reach (docs/SEMANTICS.md S1-S3), on the fake filesystem.

The fake runs as uid 1000; another user is uid 2000.  Each scenario of issue 12 that these clauses
fix is one test here (the real-filesystem twins, with a real second user, are in tests/security/).
"""

from __future__ import annotations

import errno
import logging
import re
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest

from hicache import HiCacheFile
from hicache.file_config import load_file_config
from hicache.file_evictor import RETRY_UNREMOVABLE_AFTER
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, path, store

OTHER = 2000


# -- S1: trust the directory or refuse it -----------------------------------------------------------


@pytest.mark.clauses("S1")
def test_a_directory_another_user_made_first_is_refused_and_its_planted_page_never_read(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir(DIR, uid=OTHER, mode=0o777)
    fs.put(path("k"), b"poison", uid=OTHER)
    with pytest.raises(PermissionError) as caught:
        store(fs, clock)
    message = str(caught.value)
    assert DIR in message and "uid 2000" in message and "0777" in message
    assert "another user" in message and "storage_dir" in message
    assert fs.calls["read"] == 0


@pytest.mark.clauses("S1")
@pytest.mark.parametrize(
    ("mode", "fix"),
    [(0o777, "chmod o-w"), (0o1777, "chmod o-w"), (0o703, "chmod o-w"), (0o770, "chmod g-w"), (0o730, "g-w")],
)
def test_a_directory_of_ours_writable_by_others_or_its_group_is_refused_with_the_fix(
    fs: FakeFileSystem, clock: FakeClock, mode: int, fix: str
) -> None:
    fs.make_dir(DIR, mode=mode)
    with pytest.raises(PermissionError) as caught:
        store(fs, clock)
    message = str(caught.value)
    assert f"{DIR} " in message and f"mode {mode:04o}" in message and "uid 1000" in message
    assert fix in message


@pytest.mark.clauses("S1")
def test_a_group_writable_directory_is_trusted_only_for_the_configured_shared_group(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir(DIR, gid=0, mode=0o2770)
    with pytest.raises(PermissionError, match="shared_group"):
        store(fs, clock)
    s = store(fs, clock, shared_group=0)
    assert s.set("k", b"v") and s.get("k") == b"v"
    fs.make_dir("/other", gid=5, mode=0o770)
    with pytest.raises(PermissionError, match="not the shared group"):
        HiCacheFile("/other", extra_config={"shared_group": 0}, fs=fs, clock=clock)


@pytest.mark.clauses("S1")
@pytest.mark.parametrize("mode", [0o700, 0o755, 0o750, 0o1700])
def test_a_directory_of_ours_or_of_root_not_writable_by_others_is_used(
    fs: FakeFileSystem, clock: FakeClock, mode: int
) -> None:
    fs.make_dir(DIR, mode=mode)
    assert store(fs, clock).set("k", b"v")
    fs.make_dir("/rooted", uid=0, mode=mode)
    HiCacheFile("/rooted", fs=fs, clock=clock)  # root's directory is trusted (as ssh trusts root)


@pytest.mark.clauses("S1")
@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_the_store_creates_its_directory_0700_or_2770_with_the_group_whatever_the_umask(
    clock: FakeClock, umask: int
) -> None:
    fs = FakeFileSystem(clock, umask=umask)
    store(fs, clock)
    assert fs.dir_meta[DIR] == (1000, 1000, 0o700)
    HiCacheFile("/shared/cache", extra_config={"shared_group": 0}, fs=fs, clock=clock)
    assert fs.dir_meta["/shared/cache"] == (1000, 0, 0o2770)


@pytest.mark.clauses("S1", "F8")
def test_a_directory_another_store_of_ours_created_first_is_fine(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    first = store(fs, clock)
    second = store(fs, clock)  # finds it there: the same checks pass
    assert first.set("k", b"v") and second.get("k") == b"v"


@pytest.mark.clauses("S1")
def test_the_directory_is_resolved_once_and_a_symlink_to_another_users_directory_is_refused(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir("/victim", uid=OTHER, mode=0o755)
    fs.put("/victim/theirs.bin", b"precious", uid=OTHER)
    fs.make_dir("/base", mode=0o755)
    fs.plant("/base/cache", "symlink", target="/victim")
    with pytest.raises(PermissionError) as caught:
        HiCacheFile("/base/cache", fs=fs, clock=clock)
    assert "/victim (from /base/cache)" in str(caught.value)
    assert fs.others("/victim") == {"theirs.bin": ("file", OTHER)}


@pytest.mark.clauses("S1")
def test_a_symlink_to_our_own_directory_is_followed_once_and_the_target_is_used(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir("/real", mode=0o700)
    fs.make_dir("/base", mode=0o755)
    fs.plant("/base/cache", "symlink", target="/real")
    s = HiCacheFile("/base/cache", fs=fs, clock=clock)
    assert s.directory == "/real"
    assert s.set("k", b"v") and set(fs.listing("/real")) == {"k.bin"}


@pytest.mark.clauses("S1")
def test_a_file_where_the_directory_should_be_is_refused(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.make_dir("/base", mode=0o755)
    fs.put("/base/cache", b"")
    with pytest.raises(OSError, match=r"not a directory"):
        HiCacheFile("/base/cache", fs=fs, clock=clock)


@pytest.mark.clauses("S1", "F9", "B1")
def test_shared_group_follows_the_configuration_rules() -> None:
    assert load_file_config({}, environ={}).shared_group is None
    assert load_file_config({"shared_group": "root"}, environ={}).shared_group == 0
    assert load_file_config({"shared_group": 0}, environ={}).shared_group == 0
    assert load_file_config({}, environ={"HICACHE_FILE_SHARED_GROUP": "0"}).shared_group == 0
    env = {"SGLANG_HICACHE_FILE_BACKEND_SHARED_GROUP": "no-such-group-hicache"}
    assert load_file_config({"shared_group": "root"}, environ=env).shared_group == 0  # extra_config first
    for bad in ("no-such-group-hicache", "", -1, 2**40):
        with pytest.raises(ValueError, match=r"shared_group.*" + re.escape(repr(bad)[:10])):
            load_file_config({"shared_group": bad}, environ={})
    with pytest.raises(ValueError, match=r"shared_group \(from HICACHE_FILE_SHARED_GROUP\)"):
        load_file_config({}, environ={"HICACHE_FILE_SHARED_GROUP": "no-such-group-hicache"})
    with pytest.raises(TypeError, match="shared_group"):
        load_file_config({"shared_group": 1.5}, environ={})


# -- S2: private files -------------------------------------------------------------------------------


@pytest.mark.clauses("S2")
def test_pages_and_temp_files_are_created_0600_or_0660_with_a_shared_group(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, umask=0)
    private = store(fs, clock)
    assert private.set("k", b"v")
    assert fs.files[path("k")].mode == 0o600
    shared = HiCacheFile("/shared", namespace=NS, extra_config={"shared_group": 0}, fs=fs, clock=clock)
    assert shared.set("k", b"v")
    assert fs.files[f"/shared/k{NS}.bin"].mode == 0o660
    assert all(f.mode in (0o600, 0o660) for f in fs.files.values())


# -- S3: only regular files of ours are pages --------------------------------------------------------

PLANTS = ["symlink", "fifo", "socket", "device", "dir", "other-user"]


def _plant(fs: FakeFileSystem, key: str, kind: str, data: bytes = b"planted!") -> None:
    if kind == "other-user":
        fs.put(path(key), data, uid=OTHER)
    else:
        fs.plant(path(key), kind, target="/etc/shadow")


@pytest.mark.clauses("S3", "F4", "F6")
@pytest.mark.parametrize("kind", PLANTS)
def test_a_planted_node_is_never_read_believed_or_counted(
    fs: FakeFileSystem, clock: FakeClock, kind: str
) -> None:
    fs.make_dir("/etc", uid=0, mode=0o755)
    fs.put("/etc/shadow", b"root:secret", uid=0)
    s = store(fs, clock, enable_metadata_cache=True, max_size=1000)
    _plant(fs, "k", kind)
    assert s.get("k") is None
    assert s.get_into("k", bytearray(8)) is False
    assert s.get_into("k", bytearray(11)) is False
    assert s.exists("k") is False and s.batch_exists(["k"]) == 0
    assert "k" not in believed(s) and "k" not in s.evictor and s.evictor.total == 0
    assert s.evictor.touch("k") is False  # never adopted, whatever size it shows
    s.check_invariants()


@pytest.mark.clauses("S3", "F3")
@pytest.mark.parametrize("kind", PLANTS)
def test_set_over_a_planted_node_answers_false_and_writes_nothing(
    fs: FakeFileSystem, clock: FakeClock, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, enable_metadata_cache=True)
    _plant(fs, "k", kind)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert s.set("k", b"mine") is False
    assert "not a page" in caplog.text
    assert fs.calls["write"] == 0 and fs.calls["replace"] == 0
    assert fs.listing(DIR) == {} and s.evictor.total == 0 and "k" not in believed(s)


@pytest.mark.clauses("S3")
def test_a_page_replaced_by_a_symlink_loses_its_belief_and_its_bytes_on_the_next_probe(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, enable_metadata_cache=True, metadata_ttl=0)
    assert s.set("k", b"12345") and s.evictor.total == 5
    fs.plant(path("k"), "symlink")
    clock.advance(1)
    assert s.get("k") is None and s.evictor.total == 0 and "k" not in believed(s)


@pytest.mark.clauses("S3", "F8")
def test_start_up_skips_planted_nodes_and_logs_one_line_per_kind_with_its_count(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs.make_dir(DIR, mode=0o700)
    fs.put(path("mine"), b"abc")
    for i in range(3):
        fs.plant(path(f"s{i}"), "symlink")
    fs.plant(path("f"), "fifo")
    fs.plant(path("d"), "dir")
    for i in range(2):
        fs.put(path(f"o{i}"), b"x" * 10**6, uid=OTHER)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        s = store(fs, clock, enable_metadata_cache=True, max_size=10)
    assert [e.key for e in s.evictor.snapshot()] == ["mine"] and s.evictor.total == 3
    assert "mine" in believed(s) and "o0" not in believed(s)
    lines = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(lines) == 4
    assert any(line.startswith("file store: 3 symlink node(s)") for line in lines)
    assert any(line.startswith("file store: 2 file of another user node(s)") for line in lines)
    assert any(line.startswith("file store: 1 fifo") for line in lines)
    assert any(line.startswith("file store: 1 dir") for line in lines)
    assert set(fs.others(DIR)) == {
        f"s0{NS}.bin",
        f"s1{NS}.bin",
        f"s2{NS}.bin",
        f"f{NS}.bin",
        f"d{NS}.bin",
        f"o0{NS}.bin",
        f"o1{NS}.bin",
    }  # start-up evicted none of them


@pytest.mark.clauses("S3", "F7")
def test_clear_unlinks_planted_nodes_without_following_and_answers_true_only_when_none_is_left(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir("/etc", uid=0, mode=0o755)
    fs.put("/etc/shadow", b"root:secret", uid=0)
    s = store(fs, clock)
    assert s.set("k", b"v")
    fs.plant(path("link"), "symlink", target="/etc/shadow")
    fs.plant(path("fifo"), "fifo")
    fs.plant(path("dir"), "dir")
    fs.put(f"{DIR}/other_z.bin", b"another namespace")
    assert s.clear() is False  # the directory cannot be unlinked
    assert fs.others(DIR) == {f"dir{NS}.bin": ("dir", 1000)}
    assert set(fs.listing(DIR)) == {"other_z.bin"}
    assert fs.listing("/etc") == {} and fs.others("/etc") == {"shadow": ("file", 0)}  # target untouched
    fs.remove(path("dir"))
    fs.plant(path("sock"), "socket")
    assert s.clear() is True and fs.others(DIR) == {}


@pytest.mark.clauses("S3", "F7")
def test_delete_unlinks_a_planted_symlink_not_its_target(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.make_dir("/etc", uid=0, mode=0o755)
    fs.put("/etc/shadow", b"root:secret", uid=0)
    s = store(fs, clock)
    fs.plant(path("k"), "symlink", target="/etc/shadow")
    assert s.delete("k") is True
    assert fs.others(DIR) == {} and "/etc/shadow" in fs.files


@pytest.mark.clauses("S3")
def test_with_a_shared_group_a_page_of_another_member_is_a_page(fs: FakeFileSystem, clock: FakeClock) -> None:
    fs.make_dir(DIR, gid=0, mode=0o2770)
    s = store(fs, clock, shared_group=0)
    fs.put(path("k"), b"theirs", uid=OTHER)
    fs.files[path("k")].gid = 0
    assert s.exists("k") and s.get("k") == b"theirs"
    fs.put(path("j"), b"stranger", uid=OTHER)  # group 2000: not the shared group
    assert not s.exists("j") and s.get("j") is None


# -- S5: keys round-trip -----------------------------------------------------------------------------

ALIAS = "\udcc3\udca9"  # os.fsencode (surrogateescape) makes it the bytes of "é"


@pytest.mark.clauses("S5", "F2", "B1")
@pytest.mark.parametrize("key", [ALIAS, "\ud800", "a\udfffb", "é" + ALIAS])
@pytest.mark.parametrize("op", ["exists", "get", "set", "delete", "get_into", "file_name"])
def test_a_key_that_does_not_encode_strictly_is_a_value_error_naming_key_before_any_io(
    fs: FakeFileSystem, clock: FakeClock, key: str, op: str
) -> None:
    s = store(fs, clock)
    before = fs.calls.total()
    args: tuple[object, ...] = {"set": (b"v",), "get_into": (bytearray(1),)}.get(op, ())
    with pytest.raises(ValueError, match=r"^key cannot be encoded as a file name, got "):
        getattr(s, op)(key, *args)
    assert fs.calls.total() == before


@pytest.mark.clauses("S5", "F1")
def test_two_distinct_keys_never_share_a_file(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock, max_size=1000)
    assert s.set("é", b"sixteen bytes..!")
    with pytest.raises(ValueError, match="key"):
        s.get(ALIAS)
    assert s.evictor.total == 16 and s.get("é") == b"sixteen bytes..!"


@pytest.mark.clauses("S5", "F5", "B1")
@pytest.mark.parametrize("bad", ["\ud800", ALIAS])
def test_a_batch_with_one_bad_key_anywhere_does_nothing_at_all(
    fs: FakeFileSystem, clock: FakeClock, bad: str
) -> None:
    s = store(fs, clock)
    before = fs.calls.total()
    with pytest.raises(ValueError, match=r"^key "):
        s.batch_set(["good", bad], [b"1", b"2"])
    with pytest.raises(ValueError, match=r"^key "):
        s.batch_get(["good", bad])
    with pytest.raises(ValueError, match=r"^key "):
        s.batch_exists(["good", bad])
    assert fs.calls.total() == before and fs.listing(DIR) == {}


@pytest.mark.clauses("S5", "B1")
def test_a_namespace_that_does_not_encode_strictly_is_refused(fs: FakeFileSystem, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match=r"^namespace cannot be encoded"):
        HiCacheFile(DIR, namespace="_" + ALIAS, fs=fs, clock=clock)


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


@pytest.mark.clauses("S6", "S2", "F3")
def test_a_taken_temp_name_is_never_unlinked_another_name_is_picked(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(fs, clock)
    names = iter(["000000000001", "000000000001", "000000000002"])
    monkeypatch.setattr("hicache.file_store.secrets.token_hex", lambda n: next(names))
    fs.put(f"{DIR}/.000000000001.tmp", b"a live writer's")
    assert s.set("k", b"mine")
    assert fs.listing(DIR)[".000000000001.tmp"].data == b"a live writer's"
    assert fs.listing(DIR)[f"k{NS}.bin"].data == b"mine"
    assert fs.calls["unlink"] == 0


@pytest.mark.clauses("S6", "B2")
def test_when_every_temp_name_tried_is_taken_the_write_is_refused_and_nothing_is_unlinked(
    fs: FakeFileSystem, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(fs, clock, max_size=100)
    monkeypatch.setattr("hicache.file_store.secrets.token_hex", lambda n: "000000000001")
    fs.plant(f"{DIR}/.000000000001.tmp", "symlink")
    assert s.set("k", b"mine") is False
    assert fs.calls["unlink"] == 0 and fs.others(DIR) == {".000000000001.tmp": ("symlink", 1000)}
    assert s.evictor.total == 0


# -- S4: bounded reads -------------------------------------------------------------------------------


@pytest.mark.clauses("S4", "F4", "B2")
def test_a_file_larger_than_max_value_size_is_refused_and_stays_counted(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, max_value_size=4, enable_metadata_cache=True)
    assert s.set("k", b"12345") and s.set("j", b"1234")
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert s.get("k") is None
        assert s.get_into("k", bytearray(5)) is False
    assert caplog.text.count("max_value_size") == 2
    assert s.get("j") == b"1234" and s.get_into("j", bytearray(4))
    assert s.evictor.total == 9 and "k" in believed(s)  # a page of ours: still on disk, still counted


@pytest.mark.clauses("S4", "F9", "B1")
def test_max_value_size_follows_the_configuration_rules_and_defaults_to_the_cap_then_16_gib() -> None:
    assert load_file_config({}, environ={}).effective_max_value_size == 16 * 1024**3
    assert load_file_config({"max_size": "1G"}, environ={}).effective_max_value_size == 10**9
    both = load_file_config({"max_size": "1G", "max_value_size": "1Mi"}, environ={})
    assert both.effective_max_value_size == 1024**2
    env = {"HICACHE_FILE_MAX_VALUE_SIZE": "2K", "SGLANG_HICACHE_FILE_BACKEND_MAX_VALUE_SIZE": "2K"}
    assert load_file_config({}, environ=env).max_value_size == 2000
    assert load_file_config({"max_value_size": 7}, environ=env).max_value_size == 7
    with pytest.raises(
        ValueError, match=r"^max_value_size \(from HICACHE_FILE_MAX_VALUE_SIZE\) must be a size"
    ):
        load_file_config({}, environ={"HICACHE_FILE_MAX_VALUE_SIZE": "lots"})
    with pytest.raises(ValueError, match=r"^extra_config\['max_value_size'\] must be >= 0"):
        load_file_config({"max_value_size": -1}, environ={})


# -- S7: costs stay proportional ---------------------------------------------------------------------


class _CountingOrder(OrderedDict[str, Any]):
    """An LRU order that counts the keys its iterations hand out (a copy of the order hands out all)."""

    visited = 0

    def __iter__(self) -> Iterator[str]:
        for key in super().__iter__():
            _CountingOrder.visited += 1
            yield key


@pytest.mark.clauses("S7", "V3")
@pytest.mark.parametrize("entries", [100, 10_000])
def test_a_set_at_the_cap_visits_only_its_victims_and_the_entries_it_skips(
    fs: FakeFileSystem, clock: FakeClock, entries: int
) -> None:
    s = store(fs, clock, max_size=entries, eviction_ratio=1.0)
    for i in range(entries):
        s.evictor.touch(f"k{i}", 1)  # tracked one-byte pages (their files are not needed to evict them)
    s.evictor._entries = _CountingOrder(s.evictor._entries)
    assert s.evictor.reserve("held", 0)  # a write in flight, most recent
    s.evictor._entries.move_to_end("k0", last=False)
    _CountingOrder.visited = 0
    assert s.set("new", b"y")
    assert _CountingOrder.visited <= 2  # one victim, and the walk stops
    assert len(s.evictor) == entries + 1 and "k0" not in s.evictor


def _evictor_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hicache.file_evictor"]


@pytest.mark.clauses("S7", "V5", "B2")
def test_an_unremovable_file_is_retried_and_logged_once_per_back_off_not_on_every_write(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, max_size=4, eviction_ratio=1.0, enable_metadata_cache=True)
    for key in ("a", "b", "c", "d"):
        assert s.set(key, b"x")
    for key in ("a", "b", "c", "d"):
        fs.fail_unlink(path(key))  # every page is stuck: each refused write would try them all
    with caplog.at_level(logging.WARNING, logger="hicache.file_evictor"):
        unlinks = fs.calls["unlink"]
        assert not s.set("e", b"y")  # tries the four once, and each starts its back-off
        assert fs.calls["unlink"] - unlinks == 4 and len(_evictor_lines(caplog)) == 4
        for i in range(200):
            assert not s.set(f"f{i}", b"y")  # resting: no unlink, no log line
        assert fs.calls["unlink"] - unlinks == 4 and len(_evictor_lines(caplog)) == 4
        assert RETRY_UNREMOVABLE_AFTER == 30.0
        clock.advance(29.5)  # before the back-off ends
        assert not s.set("g", b"y")
        assert fs.calls["unlink"] - unlinks == 4
        fs.allow_unlink(path("a"))  # healed meanwhile, by hand
        clock.advance(0.5)  # the exact instant the back-off ends: "a" is retried and goes
        assert s.set("g", b"y")
        assert fs.calls["unlink"] - unlinks == 5 and len(_evictor_lines(caplog)) == 4
        assert not s.exists("a") and [e.key for e in s.evictor.snapshot()] == ["b", "c", "d", "g"]
        clock.advance(30.0)
        assert s.set("h", b"y")  # b, c, d retried and logged again (once each), then "g" goes
        assert fs.calls["unlink"] - unlinks == 9 and len(_evictor_lines(caplog)) == 7
    assert "cannot remove 'a', skipping it for 30 s" in _evictor_lines(caplog)[0]
    s.check_invariants()


@pytest.mark.clauses("S7", "V4")
def test_a_back_off_belongs_to_the_entry_a_new_write_of_the_key_is_evictable_at_once(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, max_size=2, eviction_ratio=1.0)
    assert s.set("a", b"x") and s.set("b", b"x")
    fs.fail_unlink(path("a"))
    assert s.set("c", b"x")  # "a" stuck (now resting), "b" evicted
    fs.allow_unlink(path("a"))
    assert s.delete("a") and s.set("a", b"z")  # a new file and a new entry: no rest inherited
    assert s.set("d", b"x")  # "c" goes (oldest); then
    assert s.set("e", b"x")  # "a" goes at once, no back-off to wait for
    assert "a" not in s.evictor and not s.exists("a")


# -- S8: the disk is the limit -----------------------------------------------------------------------


@pytest.mark.clauses("S8", "V3", "F3")
def test_a_full_disk_below_the_cap_evicts_old_pages_and_retries_the_write_once(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs = FakeFileSystem(clock, disk_size=10)
    s = store(fs, clock, max_size=1 << 20, eviction_ratio=1.0, enable_metadata_cache=True)
    assert s.evictor.max_size == 10  # clamped (S8), and yet:
    fs.put(f"{DIR}/someone-else.dat", b"o" * 4)  # another program fills the disk: the cap is never reached
    for key in ("a", "b", "c"):
        assert s.set(key, b"xx")
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        writes = fs.calls["write"]
        assert s.set("d", b"yyy")  # ENOSPC, evict "a" and "b" (3 bytes at least), one retry
    assert fs.calls["write"] - writes == 2
    assert fs.listing(DIR).keys() == {"someone-else.dat", "c_m.bin", "d_m.bin"}
    assert s.get("d") == b"yyy" and not s.exists("a") and "b" not in believed(s)
    assert "cannot write '/cache/d_m.bin': [Errno 28]" in caplog.text
    assert "retrying 'd'" in caplog.text
    s.check_invariants()


@pytest.mark.clauses("S8", "F3", "B2")
def test_enospc_is_retried_once_only_and_only_when_eviction_freed_something(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, disk_size=1 << 20)
    s = store(fs, clock, max_size=100, eviction_ratio=1.0)
    assert s.set("a", b"xx")
    fs.fail("write", errno.ENOSPC, times=2)
    writes = fs.calls["write"]
    assert not s.set("b", b"y")  # ENOSPC, "a" evicted, retried once, ENOSPC again: False
    assert fs.calls["write"] - writes == 2 and fs.pending_faults("write") == 0
    assert fs.listing(DIR) == {} and len(s.evictor) == 0  # nothing left behind, reservation released
    fs.fail("write", errno.ENOSPC)
    writes = fs.calls["write"]
    assert not s.set("c", b"y")  # nothing to evict: no retry
    assert fs.calls["write"] - writes == 1
    fs.fail("write", errno.EIO)
    assert s.set("d", b"y") is False and fs.calls["write"] - writes == 2  # EIO is no pressure: no retry
    s.check_invariants()


@pytest.mark.clauses("S8", "V1")
def test_enospc_evicts_nothing_when_eviction_is_off(clock: FakeClock) -> None:
    fs = FakeFileSystem(clock, disk_size=4)
    s = store(fs, clock)
    assert s.set("a", b"xxxx")
    assert not s.set("b", b"y")  # the disk is full, but no cap and no floor: no page is ever evicted
    assert s.get("a") == b"xxxx"


@pytest.mark.clauses("S8", "V3")
def test_a_cap_above_the_disk_is_clamped_to_it_with_a_warning(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs = FakeFileSystem(clock, disk_size=100)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        s = store(fs, clock, max_size=1000)
    assert s.evictor.max_size == 100
    assert "max_size 1000 is above the 100 bytes of the filesystem" in caplog.text
    assert store(fs, clock, max_size=60).evictor.max_size == 60  # below the disk: as configured
    assert store(fs, clock).evictor.max_size == 0  # no cap: nothing to clamp


# -- C6: one store per namespace ---------------------------------------------------------------------


@pytest.mark.clauses("C6")
def test_a_second_live_store_on_a_namespace_is_warned_about_and_a_gone_one_is_not(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        first = store(fs, clock)
        assert "another live store" not in caplog.text
        second = store(fs, clock)
        assert "another live store holds namespace '_m' of '/cache'" in caplog.text
        assert "lock file '/cache/.hicache_m.lock'" in caplog.text
        caplog.clear()
        HiCacheFile(DIR, namespace="_other", fs=fs, clock=clock)  # another namespace: its own lock
        assert "another live store" not in caplog.text
        # Both gone with their last references, no collection needed (test_file_store_namespace_lock.py):
        # the lock is free.
        del first, second
        store(fs, clock)
        assert "another live store" not in caplog.text


@pytest.mark.clauses("V2", "F7")
def test_pages_clear_cannot_remove_are_adopted_again_oldest_first_not_in_listing_order(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """Regression (found by the file store machine at the verify budget): the pages ``clear`` could not
    remove went back into the evictor in the directory listing's order (by name here), where the model,
    like start-up, adopts them oldest first.  'z' is written first and 'a' second, so oldest first
    is z, a; by name it would be a, z."""
    s = store(fs, clock, max_size=1000)
    assert s.set("z", b"zz")
    clock.advance(1.0)
    assert s.set("a", b"aa")
    fs.fail_unlink(path("z"), errno.EPERM)
    fs.fail_unlink(path("a"), errno.EPERM)
    assert s.clear() is False
    assert [e.key for e in s._evictor.snapshot()] == ["z", "a"]
