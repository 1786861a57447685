"""HiCacheFile on the real filesystem, with several processes on one directory (F1, F3, F4, F8, C2, C3, C4).

Children are started with the "spawn" method (no inherited locks or threads)
from ``tests/integration/_children.py``; they wait on barriers and pipes, never
on sleeps.  Every wait has a bounded timeout so a wedged child fails the test
instead of hanging it.  Correctness never depends on timing: each assertion
holds in every interleaving of the children.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pytest

from hicache.file_store import HiCacheFile, is_temp_name, key_of_name
from hicache.fs import FileStat, OSFileSystem
from spec.world.clock import FakeClock
from tests.integration import _children
from tests.integration._children import FOREIGN_VALUE_SIZE, VALUE_SIZE, content

TIMEOUT = 300.0  # seconds; only ever reached when something is wedged (above the children's barrier wait)
CONTEXT = multiprocessing.get_context("spawn")


class Children:
    """Spawned children and their pipes; whatever is still alive at teardown is killed."""

    def __init__(self) -> None:
        self.started: list[tuple[BaseProcess, Connection]] = []

    def start(self, target: Callable[..., None], *args: object) -> tuple[BaseProcess, Connection]:
        ours, theirs = CONTEXT.Pipe()
        process = CONTEXT.Process(target=target, args=(theirs, *args), daemon=True)
        process.start()
        theirs.close()
        self.started.append((process, ours))
        return process, ours

    @staticmethod
    def receive(conn: Connection) -> Any:
        assert conn.poll(TIMEOUT), f"no report from a child within {TIMEOUT} s"
        return conn.recv()

    @staticmethod
    def join(process: BaseProcess, exitcode: int = 0) -> None:
        process.join(TIMEOUT)
        assert process.exitcode == exitcode, f"child exit code {process.exitcode}, expected {exitcode}"

    def close(self) -> None:
        for process, conn in self.started:
            if process.is_alive():
                process.kill()
                process.join(TIMEOUT)
            conn.close()
            process.close()


@pytest.fixture
def children() -> Iterator[Children]:
    started = Children()
    yield started
    started.close()


@pytest.fixture(autouse=True)
def _no_configuration_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores here (and the children, which inherit ``os.environ``) see only the settings the test gives."""
    for name in list(os.environ):
        if name.startswith(("HICACHE_FILE_", "SGLANG_HICACHE_FILE_BACKEND_")):
            monkeypatch.delenv(name)


class ShiftedClockFileSystem(OSFileSystem):
    """The OS port with a wall clock ``offset`` seconds ahead: makes every existing temp file "old"."""

    __slots__ = ("offset",)

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def now(self) -> float:
        return super().now() + self.offset


def namespace_files(directory: Path, namespace: str) -> dict[str, bytes]:
    """key -> bytes of the files of ``namespace`` (no temp files), as the store names them."""
    found = {}
    for path in directory.rglob("*"):  # the subdirectories too (F1-fanout's fanout layout)
        key = key_of_name(path.name, namespace)
        if key is not None:
            found[key] = path.read_bytes()
    return found


def temp_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*") if is_temp_name(path.name))


# -- F1: namespaces ------------------------------------------------------------


@pytest.mark.clauses("F1", "F7", "F8", "V5", "C3")
def test_stores_in_different_namespaces_in_three_processes_never_touch_each_others_files(
    tmp_path: Path, children: Children
) -> None:
    # A bystander namespace holds more bytes than any worker's cap: a worker that counted it at
    # start-up would evict it at once (F8), one that evicted across namespaces would remove it.
    bystander = HiCacheFile(tmp_path, namespace="_bystander")
    for i in range(16):
        assert bystander.set(f"k{i}", content("_bystander", f"k{i}", FOREIGN_VALUE_SIZE))
    namespaces = {"_r0": True, "_r1": False, "": False}  # namespace -> clears at the end ("" is the default)
    barrier = CONTEXT.Barrier(len(namespaces))
    running = {
        ns: children.start(_children.namespace_worker, barrier, str(tmp_path), ns, clear)
        for ns, clear in namespaces.items()
    }
    reports = {ns: Children.receive(conn) for ns, (_, conn) in running.items()}
    for process, _ in running.values():
        Children.join(process)

    for ns, report in reports.items():
        assert report["errors"] == [], (ns, report["errors"])
        on_disk = namespace_files(tmp_path, ns)
        assert sorted(on_disk) == report["keys"], f"{ns}: files on disk differ from what its store tracks"
        assert all(value == content(ns, key) for key, value in on_disk.items()), ns
        assert report["total"] == sum(map(len, on_disk.values())), f"{ns}: accounting != bytes on disk (C3)"
        assert report["total"] <= 4 * VALUE_SIZE, f"{ns}: over its cap"
    assert namespace_files(tmp_path, "_r0") == {}, "clear() left files of its own namespace"
    assert len(namespace_files(tmp_path, "_r1")) > 0 and len(namespace_files(tmp_path, "")) > 0
    survivors = namespace_files(tmp_path, "_bystander")
    assert survivors == {f"k{i}": content("_bystander", f"k{i}", FOREIGN_VALUE_SIZE) for i in range(16)}
    assert temp_files(tmp_path) == []


@pytest.mark.clauses("F1", "F7", "F8")
def test_a_store_with_the_default_empty_namespace_leaves_other_namespaces_files_alone(tmp_path: Path) -> None:
    # Regression (F1): the empty namespace's suffix ".bin" once matched every namespace's files, so
    # a default store counted, evicted and cleared them all.
    ranked = HiCacheFile(tmp_path, namespace="_r1")
    assert ranked.set("k", b"rank one's page")
    default = HiCacheFile(tmp_path, extra_config={"max_size": 1})  # namespace "", a cap nothing fits
    assert default.evictor.total == 0, "the start-up scan counted another namespace's file"
    default.clear()
    assert ranked.get("k") == b"rank one's page"


@pytest.mark.clauses("F1")
def test_two_namespaces_never_name_the_same_file(tmp_path: Path) -> None:
    # Regression (F1): key "x_b" in namespace "_a" and key "x" in "_b_a" once both named "x_b_a.bin".
    outer = HiCacheFile(tmp_path, namespace="_a")
    inner = HiCacheFile(tmp_path, namespace="_b_a")
    assert outer.set("x_b", b"outer's page")
    assert inner.set("x", b"inner's page")
    assert inner.get("x") == b"inner's page"
    assert outer.get("x_b") == b"outer's page"
    pages = [p for p in tmp_path.iterdir() if not p.name.endswith(".lock")]  # each namespace's lock (C6)
    assert len(pages) == 2


# -- C2: the same namespace in another process -------------------------------------------------


def _delete_in_another_process(children: Children, directory: Path, namespace: str, key: str) -> None:
    process, conn = children.start(_children.delete_key, str(directory), namespace, key)
    report = Children.receive(conn)
    Children.join(process)
    assert report == {"deleted": True, "exists": False}


@pytest.mark.clauses("C2", "F4", "F6", "M2", "C3")
def test_another_processs_deletion_is_believed_at_most_ttl_after_the_beliefs_birth(
    tmp_path: Path, children: Children, clock: FakeClock
) -> None:
    store = HiCacheFile(
        tmp_path,
        namespace="_c2",
        extra_config={"enable_metadata_cache": True, "metadata_ttl": 5},
        clock=clock,
    )
    born = clock()
    assert store.set("k", b"page")  # the belief is born now
    clock.advance(2)
    _delete_in_another_process(children, tmp_path, "_c2", "k")
    assert store.exists("k"), "a live belief answers without looking (F6)"
    clock.set(born + 5)
    assert store.exists("k"), "still live at exactly birth + TTL (M2)"
    assert store.evictor.total == 4
    clock.advance(0.125)
    assert not store.exists("k"), "believed longer than the TTL after another process deleted it (C2)"
    assert "k" not in store.evictor and store.evictor.total == 0, "a vanished file kept its bytes (F4)"
    store.check_invariants()


@pytest.mark.clauses("C2", "F4", "C3")
def test_with_ttl_minus_one_another_processs_deletion_is_believed_until_this_store_finds_it_missing(
    tmp_path: Path, children: Children, clock: FakeClock
) -> None:
    store = HiCacheFile(
        tmp_path,
        namespace="_c2",
        extra_config={"enable_metadata_cache": True, "metadata_ttl": -1},
        clock=clock,
    )
    assert store.set("k", b"page")
    _delete_in_another_process(children, tmp_path, "_c2", "k")
    clock.advance(10**6)
    assert store.exists("k"), "TTL -1: the belief outlives any time"
    assert store.get("k") is None  # this store finds the file missing...
    assert not store.exists("k"), "...and stops believing it at once"
    assert store.evictor.total == 0
    store.check_invariants()


@pytest.mark.clauses("C2", "F6")
def test_without_the_metadata_cache_another_processs_deletion_is_seen_at_once(
    tmp_path: Path, children: Children
) -> None:
    store = HiCacheFile(tmp_path, namespace="_c2")
    assert store.set("k", b"page")
    _delete_in_another_process(children, tmp_path, "_c2", "k")
    assert not store.exists("k")
    assert store.batch_exists(["k"]) == 0


@pytest.mark.clauses("F4", "F6", "V4", "C3")
def test_a_file_another_process_created_is_seen_at_once_and_adopted_with_its_size(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = HiCacheFile(
        tmp_path,
        namespace="_c2",
        extra_config={"enable_metadata_cache": True, "metadata_ttl": -1},
        clock=clock,
    )
    assert not store.exists("k")  # no negative belief is kept...
    other = HiCacheFile(tmp_path, namespace="_c2")  # (another writer; a process or not, the disk is the same)
    assert other.set("k", b"written elsewhere")
    assert store.exists("k")  # ...so the new file is seen at once
    assert store.get("k") == b"written elsewhere"
    assert store.evictor.total == len(b"written elsewhere"), (
        "get() adopts an untracked file with its real size"
    )


@pytest.mark.clauses("C2", "C3", "C4", "F3", "F4")
def test_processes_sharing_one_namespace_only_ever_read_whole_values(
    tmp_path: Path, children: Children
) -> None:
    workers = 3
    barrier = CONTEXT.Barrier(workers)
    running = [
        children.start(_children.same_namespace_worker, barrier, str(tmp_path), seed)
        for seed in range(workers)
    ]
    reports = [Children.receive(conn) for _, conn in running]
    for process, _ in running:
        Children.join(process)
    assert [r["errors"] for r in reports] == [[]] * workers
    restarted = HiCacheFile(tmp_path, namespace="_shared")
    on_disk = namespace_files(tmp_path, "_shared")
    assert all(value == content("_shared", key, FOREIGN_VALUE_SIZE) for key, value in on_disk.items())
    assert restarted.evictor.total == sum(map(len, on_disk.values())), "C3 after restart"
    assert temp_files(tmp_path) == [], "a writer that finished normally left a temp file"
    restarted.check_invariants()


# -- C4, F8: a writer killed with SIGKILL ------------------------------------------------------


@pytest.mark.clauses("C4", "F3", "F8", "C3", "F1-fanout")
@pytest.mark.parametrize("layout", ["flat", "fanout"])
@pytest.mark.parametrize("stage", ["mid-write", "before-rename", "after-rename"])
def test_a_writer_killed_mid_write_leaves_only_whole_values_and_its_temp_file_is_cleaned_once_old(
    tmp_path: Path, children: Children, stage: str, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HICACHE_FILE_LAYOUT", layout)  # the writer (a child: it inherits it) and the restarts
    process, conn = children.start(_children.write_then_get_killed, str(tmp_path), stage, 3)
    kind, committed = Children.receive(conn)
    assert kind == "committed" and committed == {"whole0": True, "whole1": True, "whole2": True}
    kind, temp_path = Children.receive(conn)
    assert kind == "paused", "the writer finished instead of pausing at the stage"
    temp = Path(temp_path)
    victim = content("_w", "victim", FOREIGN_VALUE_SIZE)
    if stage == "mid-write":
        assert temp.read_bytes() == victim[: len(victim) // 2]
    elif stage == "before-rename":
        assert temp.read_bytes() == victim
    else:
        assert not temp.exists()
    assert process.pid is not None
    os.kill(process.pid, signal.SIGKILL)
    Children.join(process, exitcode=-signal.SIGKILL)

    restarted = HiCacheFile(tmp_path, namespace="_w")
    for i in range(3):
        assert restarted.get(f"whole{i}") == content("_w", f"whole{i}"), (
            "a value whose set() returned True is lost"
        )
    if stage == "after-rename":
        assert restarted.get("victim") == victim
    else:
        assert restarted.get("victim") is None, "a value that was never published can be read"
        assert not restarted.exists("victim")
    on_disk = namespace_files(tmp_path, "_w")
    assert all(
        value == content("_w", key, len(value)) and len(value) in (VALUE_SIZE, FOREIGN_VALUE_SIZE)
        for key, value in on_disk.items()
    )
    assert restarted.evictor.total == sum(map(len, on_disk.values())), "C3: the temp file was counted"
    leftover = temp_files(tmp_path)
    assert leftover == ([] if stage == "after-rename" else [temp]), "a young temp file may be a live writer's"

    age = restarted.config.temp_max_age
    HiCacheFile(tmp_path, namespace="_w", fs=ShiftedClockFileSystem(age / 2))
    assert temp_files(tmp_path) == leftover, "a temp file younger than the threshold was removed"
    HiCacheFile(tmp_path, namespace="_w", fs=ShiftedClockFileSystem(age + 1))
    assert temp_files(tmp_path) == [], "the crashed writer's temp file outlived the threshold (F8)"
    assert namespace_files(tmp_path, "_w") == on_disk


@pytest.mark.clauses("F1", "F8")
def test_any_namespaces_store_removes_old_temp_files_but_never_another_namespaces_key_files(
    tmp_path: Path,
) -> None:
    # Temp names carry no namespace, so any store removes any old temp file: say so, and that
    # key files of other namespaces are never taken for temp files.
    other = HiCacheFile(tmp_path, namespace="_other")
    assert other.set("k", b"page")
    stale = tmp_path / ".0123456789ab.tmp"
    stale.write_bytes(b"half a pa")
    HiCacheFile(tmp_path, namespace="_mine", fs=ShiftedClockFileSystem(10 * 3600))
    assert not stale.exists()
    assert namespace_files(tmp_path, "_other") == {"k": b"page"}


# -- F8: the directory created by several processes at once --------------------------------------


@pytest.mark.clauses("F8")
def test_four_processes_creating_the_storage_directory_at_once_all_succeed(
    tmp_path: Path, children: Children
) -> None:
    directory = tmp_path / "not" / "there" / "yet"
    workers = 4
    barrier = CONTEXT.Barrier(workers)
    running = [
        children.start(_children.create_directory_and_write, barrier, str(directory), i)
        for i in range(workers)
    ]
    reports = [Children.receive(conn) for _, conn in running]
    for process, _ in running:
        Children.join(process)
    assert reports == [{"error": None, "written": True}] * workers
    for i in range(workers):
        assert namespace_files(directory, f"_p{i}") == {"page": content(f"_p{i}", "page")}


class _LosesTheMkdirRace(OSFileSystem):
    """The OS port, where another process creates the directory just before this one tries."""

    __slots__ = ()

    def mkdir(self, path: str, mode: int = 0o700, gid: int | None = None) -> FileStat:
        os.makedirs(path, mode)  # the other process wins...
        return super().mkdir(path, mode, gid)  # ...and this one finds the directory there


@pytest.mark.clauses("F8")
def test_a_store_whose_directory_appears_just_before_it_creates_it_works(tmp_path: Path) -> None:
    store = HiCacheFile(tmp_path / "d" / "e", fs=_LosesTheMkdirRace())
    assert store.set("k", b"page") and store.get("k") == b"page"
