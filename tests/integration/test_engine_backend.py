"""The reference store inside the engine (F10): built by the engine's own factory from the wheel, tensors
round-trip, pages cross between it and the engine's ``HiCacheFile`` both ways, the v2 calls answer as the
engine's do, and I/O failures are answers plus a log line (B2).  Skipped, saying why, without torch or the
wheel."""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hicache.fs import OSFileSystem
from tests.integration._engine import Engine, HostPool, load

DTYPES = ("float32", "bfloat16", "float16", "int8", "uint8", "int64", "bool")


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    yield from load()


def page(engine: Engine, seed: int, dtype: str = "bfloat16", shape: tuple[int, ...] = (4, 8)) -> Any:
    torch = engine.torch
    values = torch.arange(seed, seed + int(torch.tensor(shape).prod()), dtype=torch.float32).reshape(shape)
    return (values % 2 == 1) if dtype == "bool" else values.to(getattr(torch, dtype))


@pytest.mark.clauses("F10")
def test_the_engines_factory_builds_it_as_dynamic_and_tensors_of_any_dtype_round_trip(
    engine: Engine, tmp_path: Path
) -> None:
    store = engine.dynamic(str(tmp_path))
    assert isinstance(store, engine.backend.HiCacheReferenceStore)
    assert isinstance(store, engine.storage.HiCacheStorage)
    for i, dtype in enumerate(DTYPES):
        value = page(engine, i, dtype)
        key = f"{i:04x}"
        assert store.set(key, value)
        target = engine.torch.zeros_like(value)
        assert store.get(key, target) is target
        assert engine.torch.equal(target, value), dtype
        assert (tmp_path / f"{key}_org-model_0_1.bin").stat().st_size == value.numel() * value.element_size()
    # a non-contiguous target is filled all the same; a target of another size is a miss (F4)
    wide = engine.torch.zeros(8, 4, dtype=engine.torch.bfloat16).t()
    assert store.get("0001", wide) is wide and engine.torch.equal(wide, page(engine, 1))
    assert store.get("0001", engine.torch.zeros(5, 8, dtype=engine.torch.bfloat16)) is None
    assert store.batch_exists(["0000", "0001", "ffff", "0002"]) == 2
    assert store.batch_set(["a1", "a2"], [page(engine, 10), page(engine, 11)])
    targets = [engine.torch.zeros(4, 8, dtype=engine.torch.bfloat16) for _ in range(3)]
    got = store.batch_get(["a1", "ffff", "a2"], targets)
    assert got[0] is targets[0] and got[1] is None and engine.torch.equal(got[2], page(engine, 11))
    # a page of one element with no dimension, and of three dimensions, as raw bytes both
    scalar, cube = engine.torch.tensor(7, dtype=engine.torch.int64), page(engine, 20, "float32", (2, 3, 4))
    assert store.set("b1", scalar) and store.set("b2", cube)
    one, three = engine.torch.zeros((), dtype=engine.torch.int64), engine.torch.zeros_like(cube)
    assert store.get("b1", one) is one and int(one) == 7
    assert store.get("b2", three) is three and engine.torch.equal(three, cube)
    # a non-contiguous value is written in its logical order (its contiguous copy outlives the write),
    # alone and in a batch; an empty page round-trips as zero bytes
    wide_value = page(engine, 30, "float32", (8, 4)).t()
    assert store.set("c1", wide_value) and store.batch_set(["c2"], [page(engine, 31, "float32", (8, 4)).t()])
    for key, seed in (("c1", 30), ("c2", 31)):
        back = engine.torch.zeros(4, 8, dtype=engine.torch.float32)
        assert store.get(key, back) is back and engine.torch.equal(
            back, page(engine, seed, "float32", (8, 4)).t()
        )
    empty = engine.torch.zeros(0, dtype=engine.torch.bfloat16)
    assert (
        store.set("c3", empty)
        and store.get("c3", engine.torch.zeros(0, dtype=engine.torch.bfloat16)) is not None
    )


@pytest.mark.clauses("F10")
def test_pages_the_engines_store_wrote_read_back_in_the_reference_store(
    engine: Engine, tmp_path: Path
) -> None:
    theirs = engine.engine_file(str(tmp_path), is_mla_model=True, tp_size=2)
    keys = ["3fa9", "3fa9.swa", "3fa9.mamba", "beef.deepseek_v4_c1_indexer"]
    for i, key in enumerate(keys):
        assert theirs.set(key, page(engine, i))
    ours = engine.dynamic(str(tmp_path), is_mla_model=True, tp_size=2)
    assert sorted(entry.key for entry in ours.store.evictor.snapshot()) == sorted(keys)  # adopted at start-up
    for i, key in enumerate(keys):
        target = engine.torch.zeros(4, 8, dtype=engine.torch.bfloat16)
        assert ours.get(key, target) is target and engine.torch.equal(target, page(engine, i)), key
    assert ours.exists("3fa9.mamba") and not ours.exists("beef")
    assert ours.batch_exists(["3fa9", "beef"]) == 1


@pytest.mark.clauses("F10")
def test_pages_the_reference_store_wrote_read_back_in_the_engines_store(
    engine: Engine, tmp_path: Path
) -> None:
    ours = engine.dynamic(str(tmp_path), tp_rank=1, tp_size=2, pp_size=2, pp_rank=1)
    keys = ["3fa9", "3fa9.swa", "3fa9.mamba", "c0de.auxiliary_swa"]
    for i, key in enumerate(keys):
        assert ours.set(key, page(engine, i, "float16"))
    theirs = engine.engine_file(str(tmp_path), tp_rank=1, tp_size=2, pp_size=2, pp_rank=1)
    for i, key in enumerate(keys):
        target = engine.torch.zeros(4, 8, dtype=engine.torch.float16)
        assert theirs.get(key, target) is not None and engine.torch.equal(target, page(engine, i, "float16"))
    assert theirs.batch_exists(keys) == len(keys)


def _present(engine: Engine, store: Any, keys: list[str], pools: dict[str, set[int]]) -> None:
    """Write the KV pages of ``keys`` up to the first index in pools["kv"] missing, and each pool's pages."""
    for pool, indices in pools.items():
        for i in sorted(indices):
            assert store.set(keys[i] if pool == "kv" else f"{keys[i]}.{pool}", page(engine, i))


@pytest.mark.clauses("F10")
def test_batch_exists_v2_answers_as_the_engines_store_for_both_hit_policies(
    engine: Engine, tmp_path: Path
) -> None:
    storage = engine.storage
    keys = [f"{i:x}a" for i in range(8)]
    layouts = [
        {"kv": {0, 1, 2, 3, 4, 5}, "mamba": {1, 3, 4}, "swa": {0, 1, 2, 3, 4}},
        {"kv": {0, 1, 2, 3, 4, 5, 6, 7}, "mamba": {0, 5, 7}, "swa": {2, 3, 4, 6, 7}},
        {"kv": {1, 2}, "mamba": {1}, "swa": {1}},
        {"kv": {0, 1, 2, 3}, "mamba": set(), "swa": {0, 1, 2, 3}},
    ]
    transfers = [
        [],
        [storage.PoolTransfer(name=storage.PoolName.SWA)],
        [
            storage.PoolTransfer(
                name=storage.PoolName.MAMBA, keys=["x"], hit_policy=storage.PoolHitPolicy.TRAILING_PAGES
            ),
            storage.PoolTransfer(
                name=storage.PoolName.SWA, keys=["x", "y"], hit_policy=storage.PoolHitPolicy.TRAILING_PAGES
            ),
        ],
        [
            storage.PoolTransfer(
                name=storage.PoolName.SWA,
                keys=["x", "y", "z"],
                hit_policy=storage.PoolHitPolicy.TRAILING_PAGES,
            ),
            storage.PoolTransfer(name=storage.PoolName.MAMBA),
        ],
    ]
    answers = set()
    for n, layout in enumerate(layouts):
        directory = tmp_path / str(n)
        ours = engine.dynamic(str(directory))
        _present(engine, ours, keys, layout)
        theirs = engine.engine_file(str(directory))
        for pools in transfers:
            expected = theirs.batch_exists_v2(keys, pools)
            assert ours.batch_exists_v2(keys, pools) == expected, (layout, pools)
            answers.add(repr(expected))
    assert len(answers) >= 8  # the layouts and policies tell many different answers apart


@pytest.mark.clauses("F10")
def test_the_v2_reads_and_writes_move_the_pages_the_engines_store_moves(
    engine: Engine, tmp_path: Path
) -> None:
    storage, torch = engine.storage, engine.torch
    ours, theirs = engine.dynamic(str(tmp_path)), engine.engine_file(str(tmp_path))
    source = {
        name: HostPool(torch, 4, 2, 3, torch.bfloat16) for name in (storage.PoolName.KV, storage.PoolName.SWA)
    }
    for name, pool in source.items():
        pool.data.copy_(torch.randn(8, 3).to(torch.bfloat16))
        ours.register_mem_host_pool_v2(pool, name)
    keys = ["aa", "bb", "cc"]
    indices = torch.tensor([0, 1, 4, 5, 2, 3])
    writes = [storage.PoolTransfer(name=name, host_indices=indices, keys=keys) for name in source]
    assert ours.batch_set_v2(writes) == {name: [True] * 3 for name in source}
    sink = {name: HostPool(torch, 4, 2, 3, torch.bfloat16) for name in source}
    for name, pool in sink.items():
        theirs.register_mem_host_pool_v2(pool, name)
    reads = [storage.PoolTransfer(name=name, host_indices=indices, keys=[*keys[:2], "dd"]) for name in source]
    got = theirs.batch_get_v2(reads)
    assert got == {name: [True, True, False] for name in source}
    for name in source:
        assert torch.equal(sink[name].data[:6][[0, 1, 4, 5]], source[name].data[:6][[0, 1, 4, 5]])
    # and back the other way, through ours, with a transfer whose indices do not match: none moved, logged
    for name, pool in sink.items():
        ours.register_mem_host_pool_v2(pool, name)
    short = storage.PoolTransfer(name=storage.PoolName.KV, host_indices=indices[:2], keys=keys)
    assert ours.batch_get_v2([*reads[1:], short]) == {
        storage.PoolName.SWA: [True, True, False],
        storage.PoolName.KV: [False] * 3,
    }


@pytest.mark.clauses("F10", "F9", "B1")
def test_an_unknown_extra_config_key_is_refused_listing_the_known_ones(
    engine: Engine, tmp_path: Path
) -> None:
    with pytest.raises(
        ValueError, match=r"unknown key\(s\) \['file_storage_dir'\].*file_storage_path.*layout"
    ):
        engine.backend.HiCacheReferenceStore(engine.config(str(tmp_path), extra={"file_storage_dir": "/x"}))
    with pytest.raises(ValueError, match="two directories"):
        engine.backend.HiCacheReferenceStore(
            engine.config(str(tmp_path), extra={"storage_dir": "/elsewhere"})
        )
    # B1: a wrong type is a TypeError naming it, before the unknown names and the two directories
    with pytest.raises(TypeError, match=r"extra_config keys must be str, got int 1"):
        engine.backend.HiCacheReferenceStore(engine.config(str(tmp_path), extra={1: 0}))
    with pytest.raises(TypeError, match=r"storage_dir must be a str or os.PathLike of str, got int 5"):
        engine.backend.HiCacheReferenceStore(engine.config(str(tmp_path), extra={"storage_dir": 5}))
    # the factory's own keys and the reference's own settings are taken
    store = engine.dynamic(
        str(tmp_path), extra={"layout": "flat", "metadata_eviction": "lru", "max_size": "1Mi"}
    )
    assert store.store.config.max_size == 2**20 and store.store.directory == os.path.realpath(tmp_path)


@pytest.mark.clauses("F10", "B1")
def test_bad_arguments_on_the_data_path_raise_naming_the_parameter(engine: Engine, tmp_path: Path) -> None:
    store = engine.dynamic(str(tmp_path))
    with pytest.raises(TypeError, match=r"^value"):
        store.set("aa", [1, 2])
    with pytest.raises(TypeError, match=r"^target_location"):
        store.get("aa", bytearray(4))
    with pytest.raises(ValueError, match=r"^key"):
        store.set("a_b", page(engine, 0))
    with pytest.raises(ValueError, match=r"^values"):
        store.batch_set(["aa", "bb"], [page(engine, 0)])
    with pytest.raises(ValueError, match=r"^pool_transfers"):
        policy = engine.storage.PoolHitPolicy.BLOCK_GROUPS
        store.batch_exists_v2(
            ["aa"], [engine.storage.PoolTransfer(name=engine.storage.PoolName.SWA, hit_policy=policy)]
        )
    assert not any(name.endswith(".bin") for name in os.listdir(tmp_path))


@pytest.mark.clauses("F10", "B2")
def test_an_io_failure_is_a_miss_or_false_plus_a_log_line(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = engine.dynamic(str(tmp_path), extra={"enable_metadata_cache": False})
    (tmp_path / "dd_org-model_0_1.bin").mkdir()  # a directory where a page would be
    target = engine.torch.zeros(4, 8, dtype=engine.torch.bfloat16)
    with caplog.at_level(logging.WARNING):
        assert store.get("dd", target) is None
        assert store.set("dd", page(engine, 0)) is False
        assert not store.exists("dd")
    assert any("dd_org-model_0_1.bin" in record.getMessage() for record in caplog.records)
    caplog.clear()

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(OSFileSystem, "write_new", full)  # the filesystem port: a full disk
    with caplog.at_level(logging.WARNING):
        assert store.set("ee", page(engine, 1)) is False
        assert store.batch_set(["ee"], [page(engine, 1)]) is False
    assert any("No space left" in record.getMessage() for record in caplog.records)
    assert not store.exists("ee") and store.get("ee", target) is None
