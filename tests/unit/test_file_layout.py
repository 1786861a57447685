"""The store's file layout (hicache/file_layout.py): one file per key named key + namespace + ``.bin``,
the key and namespace checks before any I/O, names that round-trip and never collide (F1, F2, S5, B1)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hicache import HiCacheFile
from hicache.file_layout import FileNaming, key_of_name
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
from tests.unit._store import DIR, NS, OTHER, calls, calls_during, store

ALIAS = "\udcc3\udca9"  # os.fsencode (surrogateescape) makes it the bytes of "é"


# -- F1: naming and namespaces ---------------------------------------------------


@pytest.mark.clauses("F1")
def test_each_key_is_one_file_named_key_namespace_bin(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    assert s.set("page-1", b"abc")
    assert set(fs.listing(DIR)) == {"page-1_m.bin"}
    assert s.file_name("page-1") == "page-1_m.bin"


@pytest.mark.clauses("F1", "F7", "F8")
def test_a_store_never_sees_counts_or_clears_another_namespace(fs: FakeFileSystem, clock: FakeClock) -> None:
    mine, other = store(fs, clock, "_r0"), store(fs, clock, "_r1")
    assert mine.set("k", b"mine") and other.set("k", b"other!")
    assert mine.get("k") == b"mine" and other.get("k") == b"other!"
    restarted = store(fs, clock, "_r0")
    assert restarted.evictor.total == 4
    assert restarted.clear()
    assert set(fs.listing(DIR)) == {"k_r1.bin"}
    assert other.get("k") == b"other!"


# -- F2: keys and values ------------------------------------------------------------


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize(
    "key",
    ["", "a/b", "../escape", "..", ".hidden", "nul\0byte", "x" * 250, "é" * 125],
    ids=["empty", "slash", "dotdot-slash", "dotdot", "leading-dot", "nul", "too-long", "too-long-utf8"],
)
def test_bad_keys_are_value_errors_before_any_io(fs: FakeFileSystem, clock: FakeClock, key: str) -> None:
    s = store(fs, clock)
    before = calls(fs)
    for op in (s.exists, s.get, s.delete, lambda k: s.set(k, b"v"), lambda k: s.get_into(k, bytearray(1))):
        with pytest.raises(ValueError, match="key"):
            op(key)
    with pytest.raises(ValueError, match="key"):
        s.batch_exists(["fine", key])
    with pytest.raises(ValueError, match="key"):
        s.batch_set(["fine", key], [b"1", b"2"])
    assert calls(fs) == before
    assert fs.listing(DIR) == {}


@pytest.mark.clauses("F2")
def test_the_longest_key_that_fits_the_name_limit_is_accepted(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    key = "x" * (255 - len(NS + ".bin"))
    assert s.set(key, b"v") and s.get(key) == b"v"
    with pytest.raises(ValueError, match="255"):
        s.set(key + "x", b"v")


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize("key", [None, 3, b"bytes-key", ("t",)])
def test_keys_that_are_not_str_are_type_errors(fs: FakeFileSystem, clock: FakeClock, key: object) -> None:
    s = store(fs, clock)
    with pytest.raises(TypeError, match="key"):
        s.exists(key)  # type: ignore[arg-type]


# -- F1: names that cannot collide ------------------------------------------------


@pytest.mark.clauses("F1")
def test_the_default_namespace_leaves_other_namespaces_files_alone(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    ranked = store(fs, clock, "_r1")
    assert ranked.set("k", b"rank one")
    default = store(fs, clock, "")
    assert default.evictor.total == 0 and not default.exists("k")
    assert default.set("k", b"default") and default.clear()
    assert ranked.get("k") == b"rank one"
    assert set(fs.listing(DIR)) == {"k_r1.bin"}


@pytest.mark.clauses("F1")
def test_a_namespace_ending_like_another_never_shares_a_file_with_it(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    outer, inner = store(fs, clock, "_a"), store(fs, clock, "_b_a")
    assert outer.set("x_b", b"outer") and inner.set("x", b"inner")
    assert outer.get("x_b") == b"outer" and inner.get("x") == b"inner"
    assert set(fs.listing(DIR)) == {"x%5Fb_a.bin", "x_b_a.bin"}
    assert store(fs, clock, "_a").evictor.snapshot() == (("x_b", 5, False),)


@pytest.mark.clauses("F1", "F2", "F8")
@pytest.mark.parametrize("key", ["a_b", "100%", "%5F", "_lead", "a__b%25"])
def test_keys_with_the_namespace_mark_or_a_percent_round_trip_through_file_names(
    fs: FakeFileSystem, clock: FakeClock, key: str
) -> None:
    assert store(fs, clock).set(key, b"v")
    again = store(fs, clock)
    assert [e.key for e in again.evictor.snapshot()] == [key]
    assert again.get(key) == b"v"


@pytest.mark.clauses("F1", "B1")
def test_a_namespace_must_start_with_the_mark(fs: FakeFileSystem, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="namespace"):
        store(fs, clock, "r0")


@pytest.mark.clauses("F1", "F8")
def test_files_this_store_would_never_write_are_not_taken_for_keys(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    fs.mkdir(DIR)
    for name in ("a%41_ns.bin", "%_ns.bin", "_ns.bin", ".x_ns.bin", "a_ns.tmp", "a_ns.bin"):
        fs.put(f"{DIR}/{name}", b"1")
    assert [e.key for e in store(fs, clock, "_ns").evictor.snapshot()] == ["a"]


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize(
    ("unit", "bytes_each"),
    [("_", 3), ("%", 3), ("é", 2), ("€", 3), ("\U0001f600", 4)],
    ids=["underscore-escaped", "percent-escaped", "two-byte", "three-byte", "four-byte"],
)
def test_the_name_limit_counts_the_escaped_encoded_bytes_exactly(
    fs: FakeFileSystem, clock: FakeClock, unit: str, bytes_each: int
) -> None:
    """NAME_MAX is 255 bytes of the file name: escapes ("_" -> "%5F", "%" -> "%25") and UTF-8 widths count.
    The longest key that fits is accepted and one more character is refused, whatever the key is made of."""
    s = store(fs, clock)
    room = 255 - len(f"{NS}.bin")
    fits = unit * (room // bytes_each)
    assert s.set(fits, b"v") and s.get(fits) == b"v"
    too_long = fits + unit
    name_bytes = len(too_long) * bytes_each + len(f"{NS}.bin")
    assert name_bytes > 255
    with pytest.raises(ValueError) as caught:
        s.exists(too_long)
    assert str(caught.value).startswith(f"key makes a file name of {name_bytes} bytes (limit 255)")


@pytest.mark.clauses("F1", "B1")
def test_a_namespace_with_a_nul_is_refused(fs: FakeFileSystem) -> None:
    with pytest.raises(ValueError) as caught:
        HiCacheFile(DIR, namespace="_a\0b", fs=fs)
    assert str(caught.value) == "namespace must not contain a path separator or NUL, got '_a\\x00b'"


@pytest.mark.clauses("F2", "S5", "F5")
@pytest.mark.parametrize("op", ["batch_exists", "batch_get"])
def test_a_batch_with_a_key_whose_escaped_name_is_too_long_is_refused_like_a_single_key(
    fs: FakeFileSystem, clock: FakeClock, op: str
) -> None:
    s = store(fs, clock)
    fits, too_long = "_" * 83, "_" * 84  # "_" escapes to 3 bytes; the namespace's "_m.bin" adds 6
    assert getattr(s, op)([fits]) in (0, [None])
    message = r"^key makes a file name of 258 bytes \(limit 255\), got '_{84}'$"
    with pytest.raises(ValueError, match=message):
        s.exists(too_long)
    with pytest.raises(ValueError, match=message):
        getattr(s, op)(["a", too_long])


def _outcome(call: Any, *args: Any) -> tuple[type[Exception], str] | None:
    try:
        call(*args)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return None


@pytest.mark.clauses("F2", "S5", "F5", "B1")
def test_a_batch_is_refused_exactly_as_its_first_bad_key_alone() -> None:
    """``check_all`` (a batch's check, decided at once on plain keys) says what ``check`` of each key in
    turn says first: nothing for good keys, else the first bad key's error, word for word."""
    naming = FileNaming(NS)  # "_m.bin": 6 bytes, so a plain key of 249 characters fits exactly
    batches: list[list[Any]] = [
        ["a", "b" * 249],
        [],
        ["a.b", "a_b", "a%b", "é"],
        ["a", "b" * 250],
        ["b" * 249, "c" * 250, "d" * 300],
        ["_" * 83, "%" * 83],
        ["a", "_" * 84],
        ["a", "%" * 84],
        ["a", ".x"],
        ["a", ""],
        ["a", "a/b"],
        ["a", "a\0b"],
        ["a", 7],
        [".x", 7],
        ["a", "é" * 125],
        ["a", "\ud800"],
        ["a/b", "c\0d", ".x", "e_f", "g%h"],  # every character that makes a key not plain, in one batch
    ]
    for keys in batches:
        first = next((said for key in keys if (said := _outcome(naming.check, key))), None)
        assert _outcome(naming.check_all, keys) == first, keys
    assert _outcome(naming.check_all, ["b" * 249, "c" * 250, "d" * 300]) == (
        ValueError,
        f"key makes a file name of 256 bytes (limit 255), got {'c' * 250!r:.100}",
    )
    assert _outcome(naming.check_all, ["a", "_" * 84]) == (
        ValueError,
        f"key makes a file name of 258 bytes (limit 255), got {'_' * 84!r:.100}",
    )


# -- B1: every refused argument names the parameter and what was passed ------------------------


@pytest.mark.clauses("F2", "B1")
@pytest.mark.parametrize(
    ("key", "error", "message"),
    [
        (7, TypeError, "key must be a str, got int 7"),
        (
            ".x",
            ValueError,
            "key must be a non-empty str without a path separator or NUL, not starting with '.', got '.x'",
        ),
        (
            "é" * 125,
            ValueError,
            "key makes a file name of 256 bytes (limit 255), got " + repr("é" * 125)[:100],
        ),
        (
            "\ud800" * 100,
            ValueError,
            "key cannot be encoded as a file name, got " + repr("\ud800" * 100)[:100],
        ),
    ],
    ids=["int", "leading-dot", "too-long", "surrogates"],
)
def test_a_bad_key_is_named_with_what_was_passed(
    fs: FakeFileSystem, clock: FakeClock, key: Any, error: type[Exception], message: str
) -> None:
    s = store(fs, clock)
    before = fs.calls.total()
    with pytest.raises(error) as caught:
        s.exists(key)
    assert str(caught.value) == message
    assert fs.calls.total() == before


# -- S5: keys round-trip -----------------------------------------------------------------------------


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


# -- F1 in the default namespace -----------------------------------------------------------------


@pytest.mark.clauses("F1", "F8")
def test_an_escaped_key_of_the_default_namespace_is_found_again_at_start_up(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    writer = store(fs, clock, "")
    assert writer.set("a%b", b"12") and writer.file_name("a%b") == "a%25b.bin"
    assert writer.set("page-1234", b"345") and writer.file_name("page-1234") == "page-1234.bin"
    del writer
    s = store(fs, clock, "")
    assert sorted(e.key for e in s.evictor.snapshot()) == ["a%b", "page-1234"] and s.evictor.total == 5


# -- F1-fanout: the two-level walk, the subdirectories made ready, the marker --------------------

FANOUT = {"layout": "fanout"}


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hicache.file_store"]


@pytest.mark.clauses("F1-fanout", "F8", "S1")
def test_the_fanout_walk_passes_over_what_is_not_a_hex_subdirectory_and_on_past_one_it_distrusts(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    writer = store(fs, clock, **FANOUT)
    for key in "acd":  # subdirectories 39/5c, ae/c3, 6b/64: each after 00, 01 and zz's place
        assert writer.set(key, b"v" * 3)
    del writer
    for parent in (DIR, f"{DIR}/39"):
        fs.put(f"{parent}/00", b"a file named like a subdirectory")  # listed before the directories
        fs.make_dir(f"{parent}/01", uid=OTHER)  # distrusted, and listed before the pages' own
        fs.make_dir(f"{parent}/0g")  # not two hex digits
        fs.make_dir(f"{parent}/zz")
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        s = store(fs, clock, **FANOUT)
    assert sorted(e.key for e in s.evictor.snapshot()) == ["a", "c", "d"] and s.evictor.total == 9
    assert _warnings(caplog) == [
        "file store: fanout subdirectory '/cache/01' belongs to uid 2000: its pages are skipped",
        "file store: fanout subdirectory '/cache/39/01' belongs to uid 2000: its pages are skipped",
    ]


@pytest.mark.clauses("F1-fanout", "F6")
def test_the_subdirectories_start_up_walked_are_ready_and_a_write_there_makes_none(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    writer = store(fs, clock, **FANOUT)
    assert writer.set("c", b"v")  # ae/c3
    del writer
    s = store(fs, clock, **FANOUT)
    assert s.delete("c")
    done, spent = calls_during(fs, lambda: s.set("c", b"w"))
    assert done and "mkdir" not in spent, spent
    done, spent = calls_during(fs, lambda: s.set("a", b"w"))  # 39/5c: not there yet, both made
    assert done and spent.get("mkdir") == 2, spent


@pytest.mark.clauses("F1-fanout", "F7", "F8", "B2")
def test_a_fanout_subdirectory_that_cannot_be_listed_is_named_at_start_up_and_by_clear(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    writer = store(fs, clock, **FANOUT)
    assert writer.set("a", b"v")
    del writer
    fs.plant(f"{DIR}/00", "dir")  # a directory whose listing fails (ENOENT)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        s = store(fs, clock, **FANOUT)
        assert [e.key for e in s.evictor.snapshot()] == ["a"]
        assert not s.clear()
    assert _warnings(caplog) == [
        "file store: cannot list the fanout subdirectory '/cache/00': [Errno 2] ENOENT: '/cache/00'",
        "file store: cannot list the fanout subdirectory '/cache/00' to clear it: [Errno 2] ENOENT:"
        " '/cache/00'",
    ]
    assert not s.exists("a") and s.evictor.total == 0


@pytest.mark.clauses("F1-fanout", "B1")
def test_a_flat_store_refuses_a_fanout_namespace_word_for_word(fs: FakeFileSystem, clock: FakeClock) -> None:
    assert store(fs, clock, **FANOUT).set("a", b"v")
    with pytest.raises(ValueError) as refused:
        store(fs, clock)
    assert str(refused.value) == (
        "namespace '_m' of storage directory /cache was written with layout 'fanout' (its marker"
        " /cache/.hicache_m.fanout is there), but this store's layout is 'flat' (setting layout,"
        " HICACHE_FILE_LAYOUT): open it with layout='fanout', or remove the marker once no page of the"
        " namespace is left in its subdirectories"
    )


@pytest.mark.clauses("F1-fanout", "F6")
def test_a_first_level_subdirectory_start_up_walked_is_ready_for_a_new_leaf_under_it(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    writer = store(fs, clock, **FANOUT)
    assert writer.set("c", b"v")  # ae/c3
    del writer
    s = store(fs, clock, **FANOUT)
    done, spent = calls_during(fs, lambda: s.set("k64", b"w"))  # ae/40: only the leaf is new
    assert done and spent.get("mkdir") == 1, spent


@pytest.mark.clauses("F1-fanout", "F7")
def test_clear_leaves_a_page_that_does_not_hash_where_it_lies_and_readies_no_subdirectory(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, **FANOUT)
    assert store(fs, clock, **FANOUT).set("c", b"v")  # another store makes ae/c3 after this one started
    assert s.set("a", b"v")  # 39/5c
    fs.put(f"{DIR}/39/5c/d_m.bin", b"misplaced")  # d's page hashes to 6b/64
    fs.put(f"{DIR}/00", b"a file named like a subdirectory")
    fs.make_dir(f"{DIR}/zz")  # not two hex digits
    caplog.clear()  # the other store's warning (a second live store on the namespace)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert s.clear()
    assert _warnings(caplog) == []
    assert set(fs.listing(f"{DIR}/39/5c")) == {"d_m.bin"} and "c_m.bin" not in fs.listing(f"{DIR}/ae/c3")
    done, spent = calls_during(fs, lambda: s.set("c", b"w"))  # ae/c3 was listed by clear: checked anew
    assert done and spent.get("mkdir") == 2, spent


@pytest.mark.clauses("F1-fanout", "F3", "F6")
def test_a_write_makes_its_two_subdirectories_once(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock, **FANOUT)
    done, spent = calls_during(fs, lambda: s.set("c", b"v"))  # ae/c3
    assert done and spent.get("mkdir") == 2, spent
    assert s.delete("c")
    done, spent = calls_during(fs, lambda: s.set("c", b"w"))
    assert done and "mkdir" not in spent, spent


@pytest.mark.clauses("F1-fanout", "S1", "S2")
def test_with_a_shared_group_the_subdirectories_a_write_makes_are_the_groups(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, **FANOUT, shared_group=0)
    assert s.set("c", b"v") and s.get("c") == b"v"
    for subdir in (f"{DIR}/ae", f"{DIR}/ae/c3"):
        st = fs.stat(subdir)
        assert (st.gid, st.mode) == (0, 0o2770), subdir


@pytest.mark.clauses("F1-fanout", "S1", "F3", "B2")
def test_a_write_is_refused_into_a_subdirectory_it_distrusts(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, **FANOUT)
    fs.make_dir(f"{DIR}/ae", uid=OTHER)  # c's first level, made by another user after start-up
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        assert not s.set("c", b"v")
    assert fs.listing(f"{DIR}/ae") == {} and "c" not in s.evictor
    assert _warnings(caplog) == [
        "file store: cannot write '/cache/ae/c3/c_m.bin': [Errno 1] fanout subdirectory belongs to uid 2000:"
        " not used: '/cache/ae'"
    ]


@pytest.mark.clauses("F1-fanout", "F3")
@pytest.mark.parametrize("gone", [("ae/c3",), ("ae/c3", "ae")], ids=["second level", "both levels"])
def test_a_subdirectory_removed_by_hand_is_made_again_and_the_write_retried_once(
    fs: FakeFileSystem, clock: FakeClock, gone: tuple[str, ...]
) -> None:
    s = store(fs, clock, **FANOUT)
    assert s.set("c", b"v") and s.delete("c")  # ae/c3 made, and ready
    for subdir in gone:
        fs.dirs.discard(f"{DIR}/{subdir}")  # another program removes the (empty) subdirectories
    done, spent = calls_during(fs, lambda: s.set("c", b"w"))
    assert done and s.get("c") == b"w" and fs.listing(f"{DIR}/ae/c3").keys() == {"c_m.bin"}
    assert spent.get("mkdir") == 2, spent
    s.check_invariants()


# -- F1: the start-up scan's batch form: keys_of is key_of of each name ------------


NAMES = [
    "3fa9.bin",  # a plain key, namespace ""
    "3fa9_r1.bin",  # of namespace _r1
    "a%5Fb.bin",  # an escaped key
    "a%zz.bin",  # a stray %: not a name a store writes
    ".0123456789ab.tmp",  # a temp file
    ".hidden.bin",  # a dot file
    ".bin",  # no key part
    "_r1.bin",  # namespace _r1, no key part
    "x.y.bin",  # a dot inside the key
    "3fa9.bin.tmp",
    "3fa9",
]
name_parts = st.sampled_from(["3fa9", "a", "_", "%", "%25", "%5F", ".", "_r1", "x", ""])
names = st.lists(name_parts, max_size=5).map("".join).map(lambda stem: stem + ".bin") | st.text(max_size=8)


@pytest.mark.clauses("F1")
@pytest.mark.parametrize("namespace", ["", "_r1", "_b_a"])
def test_keys_of_is_key_of_name_of_each_name_plain_or_not(namespace: str) -> None:
    naming = FileNaming(namespace)
    plain = [f"{i:x}{namespace}.bin" for i in range(1, 50)]
    assert (
        naming.keys_of(plain)
        == [key_of_name(name, namespace) for name in plain]
        == [f"{i:x}" for i in range(1, 50)]
    )
    for mixed in (NAMES, plain + NAMES, NAMES + plain, []):
        assert list(naming.keys_of(mixed)) == [key_of_name(name, namespace) for name in mixed]
    assert [naming.key_of(name) for name in NAMES] == [key_of_name(name, namespace) for name in NAMES]


@pytest.mark.clauses("F1")
@given(st.lists(names, max_size=6), st.sampled_from(["", "_r1"]))
def test_keys_of_any_names_is_key_of_name_of_each(batch: list[str], namespace: str) -> None:
    assert list(FileNaming(namespace).keys_of(batch)) == [key_of_name(name, namespace) for name in batch]
