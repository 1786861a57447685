"""The engine's file names as a naming of HiCacheFile (F10, F1, F2, S5), on the fake filesystem; no torch."""

from __future__ import annotations

from typing import Any

import pytest

from hicache import EngineNaming, HiCacheFile
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

DIR = "/cache"
POOLS = ("mamba", "swa", "deepseek_v4_c1", "deepseek_v4_c1_indexer")


def naming(suffix: str = "_m_0_2", **kwargs: Any) -> EngineNaming:
    return EngineNaming(suffix, pools=POOLS, **kwargs)


def store(
    fs: FakeFileSystem, clock: FakeClock, name: EngineNaming | None = None, **config: Any
) -> HiCacheFile:
    return HiCacheFile(DIR, extra_config=config, fs=fs, clock=clock, naming=name or naming())


@pytest.mark.clauses("F10", "F1")
def test_keys_are_written_as_they_are_with_the_engines_suffix(fs: FakeFileSystem, clock: FakeClock) -> None:
    s = store(fs, clock)
    for key in ("3fa9", "3fa9.swa", "3fa9.deepseek_v4_c1", "3fa9.mamba", "a%b"):
        assert s.set(key, b"v")
    names = {name for name in fs.listing(DIR) if name.endswith(".bin")}
    assert names == {
        "3fa9_m_0_2.bin",
        "3fa9.swa_m_0_2.bin",
        "3fa9.deepseek_v4_c1_m_0_2.bin",
        "3fa9.mamba_m_0_2.bin",
        "a%b_m_0_2.bin",  # nothing escaped, unlike the default naming's %25
    }


@pytest.mark.clauses("F10")
def test_mla_state_keys_take_the_tp_suffix_and_the_rest_the_shared_one(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock, naming("_m", sharded_suffix="_m_0_2"))
    assert s.file_name("3fa9") == "3fa9_m.bin"
    assert s.file_name("3fa9.mamba") == "3fa9.mamba_m_0_2.bin"
    assert s.file_name("3fa9.swa") == "3fa9.swa_m.bin"


@pytest.mark.clauses("F10", "F2", "B1")
@pytest.mark.parametrize(
    "key",
    ["", ".hidden", "a/b", "a\0b", "a_b", "a_b.swa", "a.unknown", "a.swa.swa", "a.", "x" * 250, "\udcc3"],
)
def test_a_key_the_engine_naming_cannot_hold_is_refused_naming_key_before_any_io(
    fs: FakeFileSystem, clock: FakeClock, key: str
) -> None:
    s = store(fs, clock)
    before = sum(fs.calls.values())
    with pytest.raises(ValueError, match="key"):
        s.exists(key)
    with pytest.raises(ValueError, match="key"):
        s.set(key, b"v")
    with pytest.raises(ValueError, match="key"):
        s.batch_exists(["ok", key])
    assert sum(fs.calls.values()) == before


@pytest.mark.clauses("F10", "F1")
def test_start_up_and_clear_see_only_files_of_this_naming(fs: FakeFileSystem, clock: FakeClock) -> None:
    others = [
        "3fa9_m_1_2.bin",  # another rank
        "3fa9_q_m_0_2.bin",  # model "q_m": its page part would hold a "_"
        "3fa9.mamba_q_m_0_2.bin",  # a pool "mamba_q" that is no pool
        "3fa9.swa_m.bin",  # the MLA shared suffix, not this store's
        "3fa9_m_0_2.tmp",
        "3fa9%5F_m_0_2.bin.x",
    ]
    for name in [*others, "3fa9_m_0_2.bin", "3fa9.swa_m_0_2.bin"]:
        fs.put(f"{DIR}/{name}", b"abc")
    s = store(fs, clock, max_size=1000)
    assert sorted(entry.key for entry in s.evictor.snapshot()) == ["3fa9", "3fa9.swa"]
    assert s.evictor.total == 6
    assert s.clear()
    assert sorted(name for name in fs.listing(DIR) if not name.startswith(".")) == sorted(others)


@pytest.mark.clauses("F10", "F1")
def test_a_file_named_for_the_other_suffix_is_not_taken_for_a_key() -> None:
    """A state key's file under the shared suffix (which the engine never writes) is not ours, nor is a
    KV page under the tp suffix of an MLA rank: each key has exactly one name."""
    mla = naming("_m", sharded_suffix="_m_0_2")
    assert mla.key_of("3fa9.mamba_m.bin") is None
    assert mla.key_of("3fa9_m_0_2.bin") is None
    assert mla.key_of("3fa9.mamba_m_0_2.bin") == "3fa9.mamba"
    assert mla.key_of("3fa9_m.bin") == "3fa9"
    reader = naming("_m", sharded_suffix="_m_1_2", owns_suffix=False)  # an MLA rank that does not write KV
    assert reader.key_of("3fa9_m.bin") is None
    assert reader.name("3fa9") == "3fa9_m.bin"


@pytest.mark.clauses("F10", "B1")
def test_bad_naming_arguments_are_refused_naming_the_parameter(fs: FakeFileSystem, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match=r"^suffix"):
        EngineNaming("m_0_1", pools=POOLS)
    with pytest.raises(ValueError, match=r"^sharded_suffix"):
        EngineNaming("_m", sharded_suffix="_a/b", pools=POOLS)
    with pytest.raises(TypeError, match=r"^pools"):
        EngineNaming("_m", pools="mamba")
    with pytest.raises(ValueError, match=r"^pools"):
        EngineNaming("_m", pools=["a.b", "mamba"])
    with pytest.raises(ValueError, match=r"^sharded_tail"):
        EngineNaming("_m", pools=["swa"])
    with pytest.raises(ValueError, match=r"^namespace"):
        HiCacheFile(DIR, namespace="_r0", fs=fs, clock=clock, naming=naming())
    with pytest.raises(TypeError, match=r"^naming"):
        HiCacheFile(DIR, fs=fs, clock=clock, naming="engine")  # type: ignore[arg-type]


@pytest.mark.clauses("F10", "F2")
def test_the_batch_shortcut_agrees_with_the_key_by_key_check() -> None:
    """``plainly_valid`` may only say True when ``check`` passes every key (it can fail: a key with "_")."""
    name = naming()
    batches = [["3fa9", "beef"], ["3fa9", "a_b"], ["3fa9.swa"], ["x" * 240], [""], []]
    for keys in batches:
        if name.plainly_valid(keys):
            for key in keys:
                name.check(key)
    assert name.plainly_valid(["3fa9", "beef"]) and not name.plainly_valid(["3fa9", "a_b"])
