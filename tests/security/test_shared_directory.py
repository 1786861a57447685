"""Issue 12's scenarios on the real filesystem, with a real neighbour (S1-S3; see conftest.py)."""

from __future__ import annotations

import contextlib
import gc
import os
import stat
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from hicache import HiCacheFile
from tests.security.conftest import as_neighbour, needs_second_user, neighbour_uid

PLANT_DIRECTORY = """
import os, sys
directory, key = sys.argv[1:]
os.mkdir(directory)
os.chmod(directory, 0o777)
with open(os.path.join(directory, key + ".bin"), "wb") as f:
    f.write(b"poisoned page")
"""

READ = """
import sys
try:
    print(open(sys.argv[1], "rb").read().decode())
except PermissionError:
    print("EACCES")
"""


@needs_second_user
@pytest.mark.clauses("S1")
def test_a_directory_the_neighbour_made_first_with_a_planted_page_is_refused(shared: Path) -> None:
    directory = shared / "hicache"
    as_neighbour(PLANT_DIRECTORY, str(directory), "k")
    with pytest.raises(PermissionError) as caught:
        HiCacheFile(directory)
    message = str(caught.value)
    assert str(directory) in message and f"uid {neighbour_uid()}" in message and "0777" in message
    assert (directory / "k.bin").read_bytes() == b"poisoned page"  # neither read nor touched


@needs_second_user
@pytest.mark.clauses("S1", "S2")
@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_pages_in_a_directory_the_store_made_are_private_whatever_the_umask(shared: Path, umask: int) -> None:
    directory = shared / "hicache"
    old = os.umask(umask)
    try:
        store = HiCacheFile(directory)
        assert store.set("k", b"prompt-derived KV bytes")
    finally:
        os.umask(old)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "k.bin").stat().st_mode) == 0o600
    assert as_neighbour(READ, str(directory / "k.bin")).stdout.strip() == "EACCES"
    os.chmod(directory, 0o755)  # even with the directory opened up by hand, the page stays private
    assert as_neighbour(READ, str(directory / "k.bin")).stdout.strip() == "EACCES"


@needs_second_user
@pytest.mark.clauses("S1", "F7", "F8")
def test_a_symlink_to_the_neighbours_directory_is_refused_and_nothing_there_is_deleted(shared: Path) -> None:
    theirs = shared / "theirs"
    as_neighbour(
        "import os, sys\nos.mkdir(sys.argv[1], 0o755)\n"
        "for n in ('a.bin', 'b.bin'):\n    open(os.path.join(sys.argv[1], n), 'wb').write(b'x' * 100)\n",
        str(theirs),
    )
    base = shared / "mine"
    base.mkdir(mode=0o700)
    (base / "cache").symlink_to(theirs)
    with pytest.raises(PermissionError, match=f"{theirs} \\(from {base / 'cache'}\\)"):
        HiCacheFile(base / "cache", extra_config={"max_size": 10})
    assert sorted(p.name for p in theirs.iterdir()) == ["a.bin", "b.bin"]


@needs_second_user
@pytest.mark.clauses("S1")
def test_a_group_writable_directory_needs_the_shared_group_and_then_the_neighbour_shares_it(
    shared: Path,
) -> None:
    directory = shared / "team"
    store = HiCacheFile(directory, extra_config={"shared_group": "nogroup"})
    st = directory.stat()
    assert stat.S_IMODE(st.st_mode) == 0o2770 and st.st_gid == 65534
    assert store.set("mine", b"ours") and stat.S_IMODE((directory / "mine.bin").stat().st_mode) == 0o660
    as_neighbour(
        "import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o660)\n"
        "os.write(fd, b'from a member')\n",
        str(directory / "theirs.bin"),
    )
    assert store.get("theirs") == b"from a member"  # a member's page is a page (S3)
    with pytest.raises(PermissionError, match="shared_group"):
        HiCacheFile(directory)  # without the setting, the group-writable directory is refused


NOT_PAGES = """
import os, sys
directory = sys.argv[1]
os.symlink("/etc/shadow", os.path.join(directory, "link.bin"))
os.mkfifo(os.path.join(directory, "fifo.bin"))
os.mkdir(os.path.join(directory, "dir.bin"))
"""


@needs_second_user
@pytest.mark.clauses("S3")
def test_nodes_a_member_plants_are_never_followed_read_or_acknowledged(shared: Path) -> None:
    """A symlink to /etc/shadow, a FIFO and a directory named like pages, planted in the shared directory."""
    directory = shared / "team"
    HiCacheFile(directory, extra_config={"shared_group": "nogroup"})
    as_neighbour(NOT_PAGES, str(directory))
    store = HiCacheFile(directory, extra_config={"shared_group": "nogroup", "max_size": "1G"})
    assert store.evictor.total == 0
    for key in ("link", "fifo", "dir"):
        assert store.get(key) is None  # the FIFO does not block: O_NONBLOCK, then fstat
        assert store.get_into(key, bytearray(16)) is False
        assert store.exists(key) is False
        assert store.set(key, b"mine") is False  # never acknowledged without being stored
    assert store.evictor.total == 0
    assert store.clear() is False  # the directory cannot be unlinked: something of the namespace is left
    assert sorted(p.name for p in directory.iterdir()) == [".hicache.lock", "dir.bin"]
    assert Path("/etc/shadow").exists()
    os.rmdir(directory / "dir.bin")
    assert store.clear() is True


@needs_second_user
@pytest.mark.clauses("S3")
def test_a_file_of_another_owner_is_not_a_page(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    store = HiCacheFile(directory, extra_config={"enable_metadata_cache": True})
    (directory / "k.bin").write_bytes(b"someone else's")
    os.chown(directory / "k.bin", neighbour_uid(), 65534)
    assert store.get("k") is None and store.exists("k") is False and store.set("k", b"mine") is False
    assert HiCacheFile(directory).evictor.total == 0


@pytest.mark.clauses("S5")
def test_keys_that_encode_to_one_file_name_do_not_alias_on_disk(tmp_path: Path) -> None:
    """'é' and '\\udcc3\\udca9' (os.fsencode makes both b'\\xc3\\xa9'): one is refused, nothing aliases."""
    store = HiCacheFile(tmp_path / "cache", extra_config={"max_size": "1M"})
    assert store.set("é", b"0123456789abcdef")
    for op in (store.get, store.exists):
        with pytest.raises(ValueError, match="key"):
            op("\udcc3\udca9")
    with pytest.raises(ValueError, match="key"):
        store.set("\udcc3\udca9", b"0123456789abcdef")
    assert store.evictor.total == 16
    with pytest.raises(ValueError, match="key"):
        store.batch_set(["good", "\ud800"], [b"1", b"2"])
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [".hicache.lock", "é.bin"]


@pytest.mark.clauses("S4")
def test_a_sparse_file_of_one_tib_is_refused_without_allocating(tmp_path: Path) -> None:
    store = HiCacheFile(tmp_path / "cache")
    with open(tmp_path / "cache" / "k.bin", "wb") as f:
        f.truncate(1 << 40)  # 1 TiB, no blocks
    tracemalloc.start()
    try:
        assert store.get("k") is None  # never a MemoryError (F4: never raises)
        assert store.get_into("k", bytearray(16)) is False
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.clauses("S4")
def test_a_sparse_file_above_max_value_size_is_refused_before_reading(tmp_path: Path) -> None:
    store = HiCacheFile(tmp_path / "cache", extra_config={"max_value_size": "1Mi"})
    with open(tmp_path / "cache" / "k.bin", "wb") as f:
        f.truncate(3 << 30)  # 3 GiB
    tracemalloc.start()
    try:
        assert store.get("k") is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.clauses("S8")
def test_a_cap_above_the_real_filesystem_is_clamped_to_its_size(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    st = os.statvfs(tmp_path)
    with caplog.at_level("WARNING", logger="hicache.file_store"):
        store = HiCacheFile(tmp_path / "cache", extra_config={"max_size": "1000P"})
    assert store.evictor.max_size == st.f_blocks * st.f_frsize
    assert "clamped" in caplog.text


@contextlib.contextmanager
def small_filesystem(size: str) -> Iterator[Path]:
    """A fresh tmpfs of ``size`` mounted for the test (root only; skipped, saying why, otherwise)."""
    mount = Path(tempfile.mkdtemp(prefix="hicache-sec-fs-", dir="/tmp"))
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"no small filesystem to fill: mount -t tmpfs failed: {done.stderr.strip()}")
        try:
            yield mount
        finally:
            gc.collect()  # a store still alive holds its lock file open: collect it before unmounting
            subprocess.run(["umount", "--lazy", str(mount)], capture_output=True, check=False)
    finally:
        os.rmdir(mount)


@pytest.mark.clauses("S8", "F3")
def test_a_full_real_disk_with_a_cap_above_it_keeps_taking_writes_by_evicting_old_pages(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Issue 12: with max_size above the filesystem, once the disk was full 0 of 200 writes succeeded.
    with small_filesystem("1m") as mount:
        store = HiCacheFile(mount / "cache", extra_config={"max_size": "1T", "eviction_ratio": 0.9})
        (mount / "other-program.dat").write_bytes(b"o" * (256 * 1024))  # the cap can never be reached
        page = b"p" * (16 * 1024)
        with caplog.at_level("WARNING", logger="hicache.file_store"):
            stored = [store.set(f"page-{i}", page) for i in range(200)]
        assert all(stored), f"{stored.count(False)} of 200 writes refused on the full disk"
        assert store.get("page-199") == page and store.get("page-0") is None  # old pages made the room
        assert "[Errno 28]" in caplog.text and "retrying" in caplog.text
        store.check_invariants()
        on_disk = sum(p.stat().st_size for p in (mount / "cache").glob("*.bin"))
        assert store.evictor.total == on_disk
        del store  # its lock file is open (C6) until the store goes: the unmount needs it closed


@pytest.mark.clauses("S7", "V5")
def test_unremovable_pages_cost_one_failed_unlink_and_one_line_each_per_back_off_not_per_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 12: with 20k unremovable files each refused write made 20k failed unlinks and 20,001 lines.
    # Even root cannot unlink a directory: each page of ours is replaced by one behind the store's back.
    directory = tmp_path / "cache"
    store = HiCacheFile(directory, extra_config={"max_size": 500, "eviction_ratio": 1.0})
    for i in range(50):
        assert store.set(f"stuck{i}", b"0123456789")
    for i in range(50):
        (directory / f"stuck{i}.bin").unlink()
        (directory / f"stuck{i}.bin").mkdir()
    with caplog.at_level("WARNING", logger="hicache.file_evictor"):
        refused = [store.set(f"new{i}", b"0123456789") for i in range(100)]
    assert not any(refused)  # nothing can be evicted: each write is refused, without spinning (V5)
    lines = [r.getMessage() for r in caplog.records if r.name == "hicache.file_evictor"]
    assert len(lines) == 50, f"{len(lines)} log lines for 50 unremovable files over 100 writes"
    assert all("skipping it for 30 s" in line for line in lines)


HOLD_A_STORE = """
import sys
sys.path.insert(0, sys.argv[2])
from hicache import HiCacheFile
store = HiCacheFile(sys.argv[1], namespace="_r0")
print("holding", flush=True)
sys.stdin.read()
"""


@pytest.mark.clauses("C6")
def test_another_live_process_on_the_namespace_is_detected_through_the_lock_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "cache"
    root = str(Path(__file__).resolve().parents[2])
    with subprocess.Popen(
        [sys.executable, "-I", "-c", HOLD_A_STORE, str(directory), root],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as other:
        assert other.stdout is not None and other.stdout.readline().strip() == "holding"
        with caplog.at_level("WARNING", logger="hicache.file_store"):
            HiCacheFile(directory, namespace="_r0")
        assert "another live store holds namespace '_r0'" in caplog.text
        assert other.communicate(input="", timeout=60)[1] is None
    caplog.clear()
    with caplog.at_level("WARNING", logger="hicache.file_store"):
        HiCacheFile(directory, namespace="_r0")  # the other process has exited: no warning
    assert "another live store" not in caplog.text
