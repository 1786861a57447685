"""What the store trusts (hicache/file_trust.py): the storage directory, resolved once and refused when
others could write it (S1), and pages that are regular files of ours or of the shared group (S3).

The fake runs as uid 1000; another user is uid 2000 (the real-filesystem twins, with a real second user,
are in tests/security/)."""

from __future__ import annotations

import logging
import re

import pytest

from hicache import HiCacheFile
from hicache.file_config import load_file_config
from hicache.file_trust import FileTrust
from hicache.fs import DirEntry
from spec.machines.file_store import believed
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, OTHER, order, path, store, warnings_said

PLANTS = ["symlink", "fifo", "socket", "device", "dir", "other-user"]


def _plant(fs: FakeFileSystem, key: str, kind: str, data: bytes = b"planted!") -> None:
    if kind == "other-user":
        fs.put(path(key), data, uid=OTHER)
    else:
        fs.plant(path(key), kind, target="/etc/shadow")


@pytest.mark.clauses("S3", "F8")
def test_with_a_shared_group_start_up_adopts_the_pages_of_the_group_and_skips_a_strangers(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir(DIR, gid=0, mode=0o2770)
    fs.put(path("member"), b"12", uid=OTHER)
    fs.files[path("member")].gid = 0  # another user of the shared group
    fs.put(path("stranger"), b"345", uid=OTHER)  # group 2000: not the shared group
    fs.put(path("mine"), b"6")
    s = store(fs, clock, shared_group=0)
    assert sorted(order(s)) == ["member", "mine"] and s.evictor.total == 3
    s.check_invariants()


@pytest.mark.clauses("S1", "B1")
def test_a_refused_directory_is_named_as_given_once_and_a_file_there_names_the_setting(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.make_dir(DIR, mode=0o777)
    with pytest.raises(
        PermissionError, match=r"^storage directory /cache \(owner [^)]*\), mode 0777\) is writable"
    ):
        store(fs, clock)  # resolved to itself: named once, with no "(from ...)"
    fs.make_dir("/base", mode=0o755)
    fs.put("/base/f", b"")
    with pytest.raises(
        NotADirectoryError,
        match=r"^storage directory /base/f is a file, not a directory: choose another storage_dir"
        r" \(HICACHE_FILE_STORAGE_DIR\)$",
    ):
        HiCacheFile("/base/f", fs=fs, clock=clock)


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


# -- S3: only regular files of ours are pages --------------------------------------------------------


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


# -- F1-fanout with S1: a fanout subdirectory is trusted as the directory is -------------------------

FANOUT = {"layout": "fanout"}
ME = 1000  # the fake's uid and gid
SHARED = 0  # the shared group, when one is configured


def _subdirs(s: HiCacheFile, key: str) -> tuple[str, str]:
    """The first- and second-level fanout subdirectories of ``key``'s page."""
    level2 = s.file_path(key).rsplit("/", 1)[0]
    return level2.rsplit("/", 1)[0], level2


@pytest.mark.clauses("F1-fanout", "S1", "B2")
@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize(
    ("group", "uid", "gid", "mode", "problem"),
    [
        (None, ME, ME, 0o700, None),
        (None, ME, ME, 0o701, None),  # others may search it: not write
        (None, ME, ME, 0o710, None),  # its group may search it: not write
        (None, OTHER, OTHER, 0o700, "belongs to uid 2000"),
        (SHARED, OTHER, SHARED, 0o2770, None),  # another member of the shared group
        (SHARED, OTHER, OTHER, 0o700, "belongs to uid 2000"),  # of another user and group
        (SHARED, ME, SHARED, 0o2770, None),
        (None, ME, ME, 0o702, "is writable by every user (mode 0702)"),
        (SHARED, ME, SHARED, 0o2772, "is writable by every user (mode 2772)"),
        (None, ME, ME, 0o720, "is writable by group 1000 (mode 0720)"),
        (SHARED, ME, ME, 0o770, "is writable by group 1000 (mode 0770)"),  # not the shared group
    ],
)
def test_start_up_trusts_a_fanout_subdirectory_by_owner_group_and_mode_and_names_why_it_skips_one(
    fs: FakeFileSystem,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    level: int,
    group: int | None,
    uid: int,
    gid: int,
    mode: int,
    problem: str | None,
) -> None:
    config = FANOUT if group is None else {**FANOUT, "shared_group": group}
    writer = store(fs, clock, **config)
    assert writer.set("k", b"page")
    subdir = _subdirs(writer, "k")[level]
    del writer
    fs.make_dir(subdir, uid=uid, gid=gid, mode=mode)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        s = store(fs, clock, **config)
    if problem is None:
        assert order(s) == ["k"] and s.evictor.total == 4
        assert warnings_said(caplog) == []
    else:
        assert order(s) == [] and s.evictor.total == 0
        assert warnings_said(caplog) == [
            f"file store: fanout subdirectory {subdir!r} {problem}: its pages are skipped"
        ]


# -- S3: the start-up scan's batch form: are_pages is is_page of each node ----------


@pytest.mark.clauses("S3")
@pytest.mark.parametrize("group", [None, 4242])
def test_are_pages_is_is_page_of_each_node(group: int | None) -> None:
    trust = FileTrust(FakeFileSystem(), group)
    me, other = trust.euid, trust.euid + 1
    nodes = [
        DirEntry(f"{kind}-{uid}-{gid}", 1, 0.0, kind, uid, gid)
        for kind in ("file", "dir", "symlink", "fifo")
        for uid in (me, other)
        for gid in (0, 4242)
    ]
    assert trust.are_pages(nodes) == [trust.is_page(node) for node in nodes]
    assert sum(trust.are_pages(nodes)) == (2 if group is None else 3)
    assert trust.are_pages([]) == []
