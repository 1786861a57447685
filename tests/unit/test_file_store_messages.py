"""What the file store says when it refuses an argument (B1) or an I/O operation fails (B2), word for word.

An operator reads these lines in a log of thousands of ranks: each must name the operation, the path (or key)
and the OS error, and each error must name the parameter and what was passed.  The tests match whole messages,
so a log call that lost an argument or an error that names the wrong type fails here (``make mutation``).
"""

from __future__ import annotations

import array
import errno
import logging
import re
from typing import Any

import pytest

from hicache import HiCacheFile
from spec.fake_fs import FakeFileSystem
from spec.fakes import FakeClock
from tests.unit._store import DIR, store

PATH = "/cache/k_m.bin"


def warnings_said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The formatted warning lines of the store's logger (formatting fails loudly on a lost argument)."""
    records = [r for r in caplog.records if r.name == "hicache.file_store"]
    assert all(r.levelno == logging.WARNING for r in records)
    return [r.getMessage() for r in records]


def assert_said(caplog: pytest.LogCaptureFixture, pattern: str) -> None:
    said = warnings_said(caplog)
    assert len(said) == 1, said
    assert re.fullmatch(pattern, said[0]), said[0]


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="hicache.file_store")


# -- B2: one log line per failed I/O operation --------------------------------------------------


@pytest.mark.clauses("F4", "B2")
def test_a_failed_read_names_the_path_and_the_error(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"abcdef")
    for read in (lambda: s.get("k"), lambda: s.get_into("k", bytearray(6))):
        caplog.clear()
        fs.fail("read", errno.EIO)
        assert not read()
        assert_said(caplog, r"file store: cannot read '/cache/k_m\.bin': \[Errno 5\] EIO: '/cache/k_m\.bin'")


@pytest.mark.clauses("F4", "B2")
def test_a_short_read_says_how_many_bytes_of_how_many(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"abcdef")
    for read in (lambda: s.get("k"), lambda: s.get_into("k", bytearray(6))):
        caplog.clear()
        fs.short_reads()
        assert not read()
        assert_said(caplog, r"file store: short read of '/cache/k_m\.bin': 3 of 6 bytes")


@pytest.mark.clauses("F4", "B2")
def test_a_buffer_of_another_size_is_not_read_and_the_line_gives_both_sizes(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"abcdef")
    buffer = bytearray(b"-----")
    assert not s.get_into("k", buffer)
    assert buffer == b"-----"
    assert_said(caplog, r"file store: '/cache/k_m\.bin' holds 6 bytes, the buffer 5: not read")


@pytest.mark.clauses("F7", "B2")
def test_a_failed_delete_names_the_path_and_the_error(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"v")
    fs.fail_unlink(PATH)
    assert s.delete("k") is False
    assert_said(caplog, r"file store: cannot delete '/cache/k_m\.bin': \[Errno 1\] EPERM: '/cache/k_m\.bin'")


@pytest.mark.clauses("F7", "B2")
def test_a_clear_that_cannot_list_the_directory_says_so(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"v")
    fs.fail("scandir", errno.EIO)
    assert s.clear() is False
    assert_said(caplog, r"file store: cannot list '/cache' to clear it: \[Errno 5\] EIO: '/cache'")
    assert s.evictor.total == 1, "nothing was removed, so the accounting stays"


@pytest.mark.clauses("F7", "B2")
def test_a_clear_that_cannot_remove_a_file_names_its_key(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"v") and s.set("j", b"ww")
    fs.fail_unlink(PATH)
    assert s.clear() is False
    assert_said(caplog, r"file store: cannot remove 'k' while clearing: \[Errno 1\] EPERM: '/cache/k_m\.bin'")
    assert s.evictor.total == 1 and "k" in s.evictor and "j" not in s.evictor


@pytest.mark.clauses("F3", "C5", "B2")
def test_a_refused_set_names_the_key_and_its_size(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock, max_size=4)
    assert s.set("k", b"12345") is False
    assert_said(caplog, r"file store: no room for 'k' \(5 bytes\): not written")


@pytest.mark.clauses("F3", "B2")
def test_a_failed_write_names_the_file_it_was_for_and_a_stuck_temp_file_is_named_too(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    temps: list[str] = []
    fs.before = lambda op, path: temps.append(path) if op == "write" else None
    fs.fail("write", errno.ENOSPC)
    assert s.set("k", b"value") is False
    assert_said(
        caplog, r"file store: cannot write '/cache/k_m\.bin': \[Errno 28\] ENOSPC: '/cache/\.\w+\.tmp'"
    )

    caplog.clear()
    fs.fail("write", errno.EIO)

    def remember_and_pin(op: str, path: str) -> None:
        if op == "write":
            temps.append(path)
            fs.fail_unlink(path)

    fs.before = remember_and_pin
    assert s.set("k", b"value") is False
    said = warnings_said(caplog)
    assert len(said) == 2, said
    assert said[1] == f"file store: cannot remove temp file {temps[-1]!r}: [Errno 1] EPERM: {temps[-1]!r}"


@pytest.mark.clauses("F6", "B2")
def test_a_failed_stat_names_the_path_and_the_error(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"v")
    fs.fail("stat", errno.EACCES)
    assert s.exists("k") is False
    assert_said(caplog, r"file store: cannot stat '/cache/k_m\.bin': \[Errno 13\] EACCES: '/cache/k_m\.bin'")


@pytest.mark.clauses("F8", "V5", "B2")
def test_a_start_over_the_limits_with_nothing_evictable_says_so(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    fs.mkdir(DIR)
    fs.put(PATH, b"123456")
    fs.fail_unlink(PATH)
    s = store(fs, clock, max_size=4)
    assert_said(caplog, r"file store: '/cache' is over its limits; nothing more can be evicted")
    assert s.evictor.total == 6


@pytest.mark.clauses("C2", "C3", "B2")
def test_a_write_overlapped_by_a_delete_keeps_its_entry_when_the_check_stat_fails(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A delete that overlaps a set makes the set check, after publishing, whether its file survived.  When
    that stat fails with EIO the file's fate is unknown: the entry stays (over-counting is the safe side;
    dropping it would leak capacity behind a file that is on disk)."""
    s = store(fs, clock)

    def delete_then_break_stat(op: str, path: str) -> None:
        if op == "replace":
            fs.before = None
            assert s.delete("k")  # nothing published yet: the delete linearizes before the set
            fs.fail("stat", errno.EIO)

    fs.before = delete_then_break_stat
    assert s.set("k", b"abc")
    assert_said(caplog, r"file store: cannot stat '/cache/k_m\.bin': \[Errno 5\] EIO: '/cache/k_m\.bin'")
    assert set(fs.listing(DIR)) == {"k_m.bin"}
    assert "k" in s.evictor and s.evictor.total == 3
    s.check_invariants()


@pytest.mark.clauses("C2", "C3")
def test_a_write_overlapped_by_a_delete_that_removed_its_file_drops_the_entry(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    """The other answer of the same check: the published file is gone (removed by the overlapping delete),
    so no entry may outlive it."""
    s = store(fs, clock)

    def delete_after_publication(op: str, path: str) -> None:
        if op == "replace":
            fs.after = None
            fs.before = None
            s.delete("k")

    fs.after = delete_after_publication
    # An overlapping removal:
    fs.before = lambda op, path: s._overlaps.start_removal() if op == "replace" else None
    assert s.set("k", b"abc")
    assert fs.listing(DIR) == {}
    assert "k" not in s.evictor and s.evictor.total == 0
    s.check_invariants()


# -- B1: every refused argument names the parameter and what was passed ------------------------


@pytest.mark.clauses("F4", "B1")
@pytest.mark.parametrize(
    ("buffer", "error", "message"),
    [
        (12, TypeError, "buffer must be a writable bytes-like object, got int"),
        (b"abc", TypeError, "buffer must be writable, got a read-only bytes"),
        (
            memoryview(bytearray(8))[::2],
            ValueError,
            "buffer must be contiguous, got a non-contiguous memoryview",
        ),
    ],
    ids=["not-a-buffer", "read-only", "strided"],
)
def test_a_bad_buffer_is_refused_with_its_type_named(
    fs: FakeFileSystem, clock: FakeClock, buffer: object, error: type[Exception], message: str
) -> None:
    s = store(fs, clock)
    assert s.set("k", b"abcd")
    with pytest.raises(error) as caught:
        s.get_into("k", buffer)
    assert str(caught.value) == message


@pytest.mark.clauses("F4")
@pytest.mark.parametrize(
    "make",
    [
        lambda: array.array("I", [0, 0]),
        lambda: memoryview(bytearray(8)).cast("B", (2, 4)),
        lambda: memoryview(bytearray(8)).cast("b"),
    ],
    ids=["uint32-array", "two-dimensional", "signed-bytes"],
)
def test_get_into_fills_a_buffer_of_any_item_format_or_shape_by_its_bytes(
    fs: FakeFileSystem, clock: FakeClock, make: Any
) -> None:
    """A buffer is its bytes: an array of 2 uint32, a 2x4 view and a signed-byte view all take 8 bytes."""
    s = store(fs, clock)
    assert s.set("k", b"ABCDEFGH")
    buffer = make()
    assert s.get_into("k", buffer)
    assert memoryview(buffer).tobytes() == b"ABCDEFGH"
    assert not s.get_into("k", array.array("I", [0])), "4 bytes of buffer for an 8-byte file"


@pytest.mark.clauses("F1", "F9", "B1")
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"storage_dir": ""}, ValueError, "storage_dir must be a non-empty str path, got ''"),
        ({"storage_dir": 5}, TypeError, "storage_dir must be a str path or None, got int 5"),
        ({"namespace": 5}, TypeError, "namespace must be a str, got int 5"),
        ({"namespace": "_a/b"}, ValueError, "namespace must not contain a path separator or NUL, got '_a/b'"),
        (
            {"namespace": "r0"},
            ValueError,
            "namespace must be empty or start with '_' (it ends the key in file names), got 'r0'",
        ),
        ({"clock": 3.0}, TypeError, "clock must be callable or None, got float 3.0"),
        (
            {"namespace": "_\ud800"},
            ValueError,
            "namespace cannot be encoded as part of a file name, got '_\\ud800'",
        ),
    ],
    ids=[
        "empty-dir",
        "int-dir",
        "int-namespace",
        "slash-namespace",
        "unmarked-namespace",
        "clock",
        "surrogate",
    ],
)
def test_a_bad_constructor_argument_is_named_with_what_was_passed(
    fs: FakeFileSystem, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    args: dict[str, Any] = {"storage_dir": DIR, "fs": fs, **kwargs}
    with pytest.raises(error) as caught:
        HiCacheFile(**args)
    assert str(caught.value) == message
    assert fs.calls.total() == 0, "refused before any I/O"


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


@pytest.mark.clauses("F2", "F5", "B1")
def test_a_bad_value_and_mismatched_batches_are_named(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    with pytest.raises(TypeError) as caught:
        s.set("k", "text")  # type: ignore[arg-type]
    assert str(caught.value) == "value must be bytes, bytearray or memoryview, got str 'text'"
    with pytest.raises(ValueError) as mismatch:
        s.batch_set(["a", "b"], [b"1"])
    assert str(mismatch.value) == "values must have one value per key: 2 keys, 1 values"
    assert fs.listing(DIR) == {}
