"""F1-fanout on the real filesystem: the flat layout reads what the engine wrote, the fanout layout keeps
every directory small, and a store never silently mixes the two (issue 24)."""

from __future__ import annotations

import logging
import os
import stat
from collections import Counter
from pathlib import Path

import pytest

from hicache import HiCacheFile
from hicache.file_store import fanout_dirs

pytestmark = pytest.mark.clauses("F1-fanout", "F1", "F8")

FANOUT = {"layout": "fanout"}


@pytest.mark.clauses("F1-fanout", "F1", "F4", "F8", "C3")
def test_a_flat_store_reads_a_directory_the_engines_format_wrote(tmp_path: Path) -> None:
    # The engine names a page <key><config suffix>.bin in the directory itself and writes it whole
    # (numpy's tofile); a flat store with that suffix as its namespace finds, counts and reads each one.
    directory = tmp_path / "engine"
    directory.mkdir(mode=0o700)
    suffix = "_Qwen-Qwen3-8B_0_1"
    pages = {f"{i:064x}": bytes([i]) * (100 + i) for i in range(5)}
    for key, value in pages.items():
        with open(directory / f"{key}{suffix}.bin", "wb") as handle:
            handle.write(value)
    store = HiCacheFile(directory, namespace=suffix, extra_config={"max_size": "1M"})
    assert store.evictor.total == sum(map(len, pages.values()))
    assert all(store.get(key) == value for key, value in pages.items())
    assert store.batch_exists(list(pages)) == len(pages)
    assert store.set("f" * 64, b"new")
    assert (directory / f"{'f' * 64}{suffix}.bin").read_bytes() == b"new"  # where the engine looks


@pytest.mark.clauses("F1-fanout", "F3", "F7", "F8", "C3")
def test_fanout_pages_lie_two_levels_down_by_the_hash_of_their_name_and_survive_a_restart(
    tmp_path: Path,
) -> None:
    store = HiCacheFile(tmp_path / "cache", namespace="_r1", extra_config=FANOUT)
    values = {f"k{i}": f"v{i}".encode() for i in range(40)}
    assert store.batch_set(list(values), list(values.values())) == [True] * 40
    for key in values:
        name = store.file_name(key)
        top, sub = fanout_dirs(name)
        assert store.file_path(key) == str(tmp_path / "cache" / top / sub / name)
        assert os.path.isfile(store.file_path(key))
    assert sorted(p.name for p in (tmp_path / "cache").iterdir() if p.is_file()) == [
        ".hicache_r1.fanout",
        ".hicache_r1.lock",
    ]
    again = HiCacheFile(tmp_path / "cache", namespace="_r1", extra_config=FANOUT)
    assert again.evictor.total == sum(map(len, values.values()))
    assert all(again.get(key) == value for key, value in values.items())
    assert again.clear()
    assert not [f for _d, _s, files in os.walk(tmp_path / "cache") for f in files if f.endswith(".bin")]


@pytest.mark.clauses("F1-fanout", "F9", "B1")
def test_a_store_refuses_a_namespace_written_in_the_other_layout_naming_the_setting(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    HiCacheFile(directory, namespace="_a", extra_config=FANOUT).set("k", b"1")
    with pytest.raises(
        ValueError, match=r"layout 'fanout'.*layout is 'flat' \(setting layout, HICACHE_FILE_LAYOUT\)"
    ):
        HiCacheFile(directory, namespace="_a")
    HiCacheFile(directory, namespace="_b").set("k", b"2")
    with pytest.raises(
        ValueError, match=r"1 page\(s\) of namespace '_b' in the flat layout.*HICACHE_FILE_LAYOUT"
    ):
        HiCacheFile(directory, namespace="_b", extra_config=FANOUT)
    # Other namespaces may use either layout in the same directory.
    assert HiCacheFile(directory, namespace="_c", extra_config=FANOUT).set("k", b"3")
    assert HiCacheFile(directory, namespace="_a", extra_config=FANOUT).get("k") == b"1"
    assert HiCacheFile(directory, namespace="_b").get("k") == b"2"


@pytest.mark.clauses("F1-fanout", "F9")
def test_the_layout_is_read_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HICACHE_FILE_LAYOUT", " FanOut ")
    store = HiCacheFile(tmp_path / "cache")
    assert store.config.layout == "fanout"
    assert store.set("k", b"v") and os.path.dirname(store.file_path("k")) != str(tmp_path / "cache")


@pytest.mark.clauses("F1-fanout", "F1", "F8", "F7")
def test_a_page_that_does_not_lie_where_its_name_hashes_is_not_this_stores(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = HiCacheFile(tmp_path / "cache", extra_config=FANOUT)
    assert store.set("k", b"value")
    path = Path(store.file_path("k"))
    top, sub = path.parent.parent.name, path.parent.name
    elsewhere = tmp_path / "cache" / top / ("00" if sub != "00" else "01")
    elsewhere.mkdir(mode=0o700)
    os.rename(path, elsewhere / path.name)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        again = HiCacheFile(tmp_path / "cache", extra_config=FANOUT)
    assert again.evictor.total == 0 and not again.exists("k")
    assert "1 misplaced node(s) named like pages" in caplog.text
    assert again.clear() and (elsewhere / path.name).exists()  # not where its probes look: not ours


@pytest.mark.clauses("F1-fanout", "F8", "S6", "C4")
def test_stale_temp_files_are_swept_in_the_subdirectories_and_in_the_directory(tmp_path: Path) -> None:
    store = HiCacheFile(tmp_path / "cache", extra_config={**FANOUT, "temp_max_age": 0})
    assert store.set("k", b"v")
    leaf = Path(store.file_path("k")).parent
    old = [leaf / ".0123456789ab.tmp", tmp_path / "cache" / ".ba9876543210.tmp"]
    for temp in old:
        temp.write_bytes(b"partial")
        os.utime(temp, (1, 1))
    (leaf / ".other-program.tmp").write_bytes(b"x")  # S6: not a temp name of the store's
    del store
    HiCacheFile(tmp_path / "cache", extra_config={**FANOUT, "temp_max_age": 0})
    assert not any(temp.exists() for temp in old)
    assert (leaf / ".other-program.tmp").exists()


@pytest.mark.verify_tier  # about 10-60 s of file creation, depending on the disk
@pytest.mark.clauses("F1-fanout")
def test_a_hundred_thousand_fanout_pages_leave_no_directory_over_a_thousand_entries(tmp_path: Path) -> None:
    store = HiCacheFile(tmp_path / "cache", extra_config=FANOUT)
    keys = [f"{i * 0x9E3779B97F4A7C15 % (1 << 256):064x}" for i in range(100_000)]
    for start in range(0, len(keys), 1000):
        chunk = keys[start : start + 1000]
        assert store.batch_set(chunk, [b"p"] * len(chunk)) == [True] * len(chunk)
    sizes = Counter(
        {directory: len(dirs) + len(files) for directory, dirs, files in os.walk(tmp_path / "cache")}
    )
    assert sum(len(files) for _d, _s, files in os.walk(tmp_path / "cache")) == 100_000 + 2  # lock, marker
    assert max(sizes.values()) <= 1000, sizes.most_common(3)
    assert HiCacheFile(tmp_path / "cache", extra_config=FANOUT).evictor.total == 100_000


@pytest.mark.clauses("F1-fanout", "F3")
def test_a_fanout_subdirectory_removed_behind_the_stores_back_is_made_again_by_the_next_write(
    tmp_path: Path,
) -> None:
    store = HiCacheFile(tmp_path / "cache", extra_config=FANOUT)
    assert store.set("k", b"v")
    leaf = Path(store.file_path("k")).parent
    (leaf / Path(store.file_path("k")).name).unlink()
    leaf.rmdir()
    leaf.parent.rmdir()
    assert store.set("k", b"again") and store.get("k") == b"again"
    assert stat.S_IMODE(leaf.stat().st_mode) == 0o700 and stat.S_IMODE(leaf.parent.stat().st_mode) == 0o700
