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
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import pytest

from hicache import HiCacheFile
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem
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


# -- B2: one log line per failed I/O operation, one per refusal ---------------------------------


def _nothing(*args: Any) -> None:
    return None


def _written(*pairs: tuple[str, bytes]) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    def write(fs: FakeFileSystem, s: HiCacheFile) -> None:
        for key, value in pairs:
            assert s.set(key, value)

    return write


def _then(
    *steps: Callable[[FakeFileSystem, HiCacheFile], None],
) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    def run(fs: FakeFileSystem, s: HiCacheFile) -> None:
        for step in steps:
            step(fs, s)

    return run


def _fail(op: str, code: int) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    return lambda fs, s: fs.fail(op, code)


def _pin(path: str) -> Callable[[FakeFileSystem, HiCacheFile], None]:
    return lambda fs, s: fs.fail_unlink(path)


def _over_the_limits(fs: FakeFileSystem) -> None:
    fs.mkdir(DIR)
    fs.put(PATH, b"123456")
    fs.fail_unlink(PATH)


def _planted_fifo(fs: FakeFileSystem) -> None:
    fs.make_dir(DIR, mode=0o700)
    fs.plant(PATH, "fifo")


def _into(size: int) -> Callable[[HiCacheFile], tuple[bool, bytes]]:
    """``get_into`` of ``k`` with a buffer of ``size`` dashes: its answer and the buffer after it."""

    def read(s: HiCacheFile) -> tuple[bool, bytes]:
        buffer = bytearray(b"-" * size)
        return s.get_into("k", buffer), bytes(buffer)

    return read


class Said(NamedTuple):
    """One failure or refusal: the disk before the store starts, its configuration, what happens after
    (writes, the armed fault), the operation, its answer, and the whole of each warning line, in order."""

    clauses: tuple[str, ...]
    act: Callable[[HiCacheFile], object]
    answer: object
    lines: tuple[str, ...]
    given: Callable[[FakeFileSystem, HiCacheFile], None] = _nothing
    before: Callable[[FakeFileSystem], None] = _nothing
    config: Mapping[str, Any] = MappingProxyType({})


_K = r"'/cache/k_m\.bin'"
SAID: dict[str, Said] = {
    "read-fails-get": Said(
        ("F4", "B2"),
        lambda s: s.get("k"),
        None,
        (rf"file store: cannot read {_K}: \[Errno 5\] EIO: {_K}",),
        _then(_written(("k", b"abcdef")), _fail("read", errno.EIO)),
    ),
    "read-fails-get_into": Said(
        ("F4", "B2"),
        lambda s: s.get_into("k", bytearray(6)),
        False,
        (rf"file store: cannot read {_K}: \[Errno 5\] EIO: {_K}",),
        _then(_written(("k", b"abcdef")), _fail("read", errno.EIO)),
    ),
    "short-read-get": Said(
        ("F4", "B2"),
        lambda s: s.get("k"),
        None,
        (rf"file store: short read of {_K}: 3 of 6 bytes",),
        _then(_written(("k", b"abcdef")), lambda fs, s: fs.short_reads()),
    ),
    "short-read-get_into": Said(
        ("F4", "B2"),
        lambda s: s.get_into("k", bytearray(6)),
        False,
        (rf"file store: short read of {_K}: 3 of 6 bytes",),
        _then(_written(("k", b"abcdef")), lambda fs, s: fs.short_reads()),
    ),
    "buffer-of-another-size": Said(
        ("F4", "B2"),
        _into(5),
        (False, b"-----"),  # not read, not touched
        (rf"file store: {_K} holds 6 bytes, the buffer 5: not read",),
        _written(("k", b"abcdef")),
    ),
    "delete-fails": Said(
        ("F7", "B2"),
        lambda s: s.delete("k"),
        False,
        (rf"file store: cannot delete {_K}: \[Errno 1\] EPERM: {_K}",),
        _then(_written(("k", b"v")), _pin(PATH)),
    ),
    "clear-cannot-list": Said(
        ("F7", "B2"),
        lambda s: (s.clear(), s.evictor.total),
        (False, 1),  # nothing was removed, so the accounting stays
        (r"file store: cannot list '/cache' to clear it: \[Errno 5\] EIO: '/cache'",),
        _then(_written(("k", b"v")), _fail("scandir", errno.EIO)),
    ),
    "clear-cannot-remove": Said(
        ("F7", "B2"),
        lambda s: (s.clear(), s.evictor.total, "k" in s.evictor, "j" in s.evictor),
        (False, 1, True, False),
        (rf"file store: cannot remove 'k' while clearing: \[Errno 1\] EPERM: {_K}",),
        _then(_written(("k", b"v"), ("j", b"ww")), _pin(PATH)),
    ),
    "no-room": Said(
        ("F3", "C5", "B2"),
        lambda s: s.set("k", b"12345"),
        False,
        (r"file store: no room for 'k' \(5 bytes\): not written",),
        config={"max_size": 4},
    ),
    "write-fails": Said(
        ("F3", "B2"),
        lambda s: s.set("k", b"value"),
        False,
        (rf"file store: cannot write {_K}: \[Errno 28\] ENOSPC: '/cache/\.\w+\.tmp'",),
        _fail("write", errno.ENOSPC),
    ),
    "stat-fails": Said(
        ("F6", "B2"),
        lambda s: s.exists("k"),
        False,
        (rf"file store: cannot stat {_K}: \[Errno 13\] EACCES: {_K}",),
        _then(_written(("k", b"v")), _fail("stat", errno.EACCES)),
    ),
    "start-over-the-limits": Said(
        ("F8", "V5", "B2"),
        lambda s: s.evictor.total,
        6,
        (r"file store: '/cache' is over its limits; nothing more can be evicted",),
        before=_over_the_limits,
        config={"max_size": 4},
    ),
    "start-skips-planted-nodes": Said(
        ("S3", "F8", "B2"),
        lambda s: s.evictor.total,
        0,
        (r"file store: 1 fifo node\(s\) named like pages of namespace '_m' in '/cache': not pages, skipped",),
        before=_planted_fifo,
    ),
    "set-over-a-symlink": Said(
        ("S3", "B2"),
        lambda s: s.set("k", b"mine"),
        False,
        (rf"file store: {_K} is a symlink of uid 1000, not a page: 'k' not written",),
        lambda fs, s: fs.plant(PATH, "symlink"),
    ),
    "read-of-a-planted-node-or-over-max_value_size": Said(
        ("S3", "S4", "B2"),
        lambda s: (s.get("k"), s.get("big")),
        (None, None),
        (
            rf"file store: {_K} is not a page of this store, not read: not a page \(a fifo of uid 1000\)",
            r"file store: '/cache/big_m\.bin' not read: 5 bytes, more than the limit of 4 \(max_value_size\)",
        ),
        _then(lambda fs, s: fs.plant(PATH, "fifo"), lambda fs, s: fs.put(f"{DIR}/big_m.bin", b"12345")),
        config={"max_value_size": 4},
    ),
}


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=name, marks=pytest.mark.clauses(*case.clauses)) for name, case in SAID.items()],
)
def test_each_failure_and_refusal_answers_and_logs_exactly_its_lines(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture, case: Said
) -> None:
    case.before(fs)
    s = store(fs, clock, **case.config)
    case.given(fs, s)
    assert case.act(s) == case.answer
    said = warnings_said(caplog)
    assert len(said) == len(case.lines), said
    for line, pattern in zip(said, case.lines, strict=True):
        assert re.fullmatch(pattern, line), line
    s.check_invariants()


@pytest.mark.clauses("F3", "B2")
def test_a_temp_file_that_cannot_be_removed_after_a_failed_write_is_named_too(
    fs: FakeFileSystem, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    s = store(fs, clock)
    temps: list[str] = []
    fs.fail("write", errno.EIO)

    def remember_and_pin(op: str, path: str) -> None:
        if op == "write":
            temps.append(path)
            fs.fail_unlink(path)

    fs.before = remember_and_pin
    assert s.set("k", b"value") is False
    said = warnings_said(caplog)
    assert len(said) == 2, said
    assert re.fullmatch(rf"file store: cannot write {_K}: \[Errno 5\] EIO: '/cache/\.\w+\.tmp'", said[0])
    assert said[1] == f"file store: cannot remove temp file {temps[-1]!r}: [Errno 1] EPERM: {temps[-1]!r}"


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
    fs.before = lambda op, path: s.evictor.overlaps.start_removal() if op == "replace" else None
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
        ({"storage_dir": ""}, ValueError, "storage_dir must be a non-empty str path without NUL, got ''"),
        (
            {"storage_dir": "/a\0b"},
            ValueError,
            "storage_dir must be a non-empty str path without NUL, got '/a\\x00b'",
        ),
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
        "nul-dir",
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
