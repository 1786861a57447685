"""The start-up scan's batch forms (F1, S3, F8).

The naming's ``keys_of`` is ``key_of`` of each name, the trust's ``are_pages`` is ``is_page`` of each node,
and the scan reads a listing longer than its chunk as it reads a short one.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hicache import HiCacheFile
from hicache.file_layout import FileNaming, key_of_name
from hicache.file_startup import _CHUNK, _gather
from hicache.file_trust import FileTrust
from hicache.fs import DirEntry
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

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


@pytest.mark.clauses("F8")
@pytest.mark.parametrize("order", [[], [0], [2, 0, 1]])
def test_gather_answers_the_items_at_the_indices_in_order(order: list[int]) -> None:
    assert list(_gather(order)(["a", "b", "c"])) == [["a", "b", "c"][i] for i in order]


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
