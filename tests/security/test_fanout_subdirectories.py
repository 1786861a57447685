"""F1-fanout with S1-S3 on the real filesystem: every fanout subdirectory is made private and checked
before it is
trusted; a subdirectory swapped for a symlink, opened to every user, or another user's is never written
through, and its pages are skipped at start-up (issue 24)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from hicache import HiCacheFile

from .conftest import needs_second_user, neighbour_uid

pytestmark = pytest.mark.clauses("F1-fanout", "S1", "S2", "S3")

FANOUT = {"layout": "fanout"}


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_subdirectories_and_pages_are_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        store = HiCacheFile(tmp_path / "cache", extra_config=FANOUT)
        assert store.set("k", b"v")
    finally:
        os.umask(old)
    page = Path(store.file_path("k"))
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(page.parent.parent.stat().st_mode) == 0o700


def _planted(tmp_path: Path, how: str) -> tuple[Path, Path, str]:
    """A store's first-level subdirectory of key ``k`` replaced by ``how``: (directory, the outside target
    or the replaced subdirectory, the key)."""
    directory = tmp_path / "cache"
    store = HiCacheFile(directory, extra_config=FANOUT)
    level1 = Path(store.file_path("k")).parent.parent
    del store
    outside = tmp_path / "outside"
    outside.mkdir()
    if how == "symlink":
        os.symlink(outside, level1)
    else:
        level1.mkdir(mode=0o700)
        if how == "world-writable":
            os.chmod(level1, 0o777)
        else:
            os.chown(level1, neighbour_uid(), -1)
    return directory, outside if how == "symlink" else level1, "k"


@pytest.mark.parametrize(
    "how",
    [
        "symlink",
        "world-writable",
        pytest.param("another user's", marks=needs_second_user),
    ],
)
def test_an_untrusted_subdirectory_is_never_written_through_and_is_skipped_at_start_up(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    directory, target, key = _planted(tmp_path, how)
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        store = HiCacheFile(directory, extra_config=FANOUT)
        assert not store.set(key, b"secret")
    assert "fanout subdirectory" in caplog.text
    assert not [f for _d, _s, files in os.walk(target) for f in files]  # nothing written there
    assert not store.exists(key) and store.evictor.total == 0
    planted = Path(store.file_path(key)).parent.parent.name
    other = next(f"o{i}" for i in range(1000) if Path(store.file_path(f"o{i}")).parent.parent.name != planted)
    assert store.set(other, b"v") and store.get(other) == b"v"  # the other subdirectories work on


def test_pages_under_a_subdirectory_opened_to_every_user_are_skipped_at_start_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = HiCacheFile(tmp_path / "cache", extra_config=FANOUT)
    assert store.set("k", b"value")
    level1 = Path(store.file_path("k")).parent.parent
    del store
    os.chmod(level1, 0o777)  # anyone could have planted or replaced what is under it
    with caplog.at_level(logging.WARNING, logger="hicache.file_store"):
        again = HiCacheFile(tmp_path / "cache", extra_config=FANOUT)
    assert again.evictor.total == 0
    assert f"fanout subdirectory '{level1}' is writable by every user (mode 0777)" in caplog.text
    assert again.clear() and Path(again.file_path("k")).exists()  # never removed through it either
