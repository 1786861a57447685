"""The engine's file names as a naming of HiCacheFile (F10, F1, F2, S5), on the fake filesystem; no torch."""

from __future__ import annotations

import os
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


def _outcome(call: Any, *args: Any) -> tuple[type[Exception], str] | None:
    try:
        call(*args)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return None


def _first_refusal(check: Any, keys: list[Any]) -> tuple[type[Exception], str] | None:
    """What ``check`` of each key in turn says first: the error of the first bad key, or None."""
    for key in keys:
        said = _outcome(check, key)
        if said is not None:
            return said
    return None


@pytest.mark.clauses("F10", "F2", "F5", "B1")
def test_a_batch_is_refused_exactly_as_its_first_bad_key_alone() -> None:
    """``check_all`` (a batch's check, decided at once on plain keys) says what ``check`` of each key in
    turn says first: nothing for good keys, else the first bad key's error, word for word."""
    name = naming()
    good = ["3fa9", "beef", "x" * 245]
    batches: list[list[Any]] = [
        good,
        [],
        ["3fa9.swa", "é"],
        [*good, "x" * 246],
        ["x" * 246, "y" * 300],
        ["x" * 245, "y" * 246, "z" * 300],
        ["3fa9", "a_b"],
        ["3fa9", ""],
        ["3fa9", "a/b"],
        ["3fa9", "a\0b"],
        ["3fa9", "a.unknown"],
        ["x" * 300, "a.unknown"],
        ["3fa9", 5],
        ["a_b", 5],
        ["\udcc3", "3fa9"],
        ["a.unknown", "b_c", "d/e", "f\0g"],  # every character that makes a key not plain, in one batch
    ]
    for keys in batches:
        assert _outcome(name.check_all, keys) == _first_refusal(name.check, keys), keys
    assert _outcome(name.check_all, good) is None
    assert _outcome(name.check_all, [*good, "x" * 246]) == (
        ValueError,
        f"key makes a file name of 256 bytes (limit 255), got {'x' * 246!r:.100}",
    )


def _refused(exc: type[Exception], message: str, call: Any, *args: Any, **kwargs: Any) -> None:
    """``call(*args, **kwargs)`` raises ``exc`` with exactly ``message`` (B1: word for word)."""
    with pytest.raises(exc) as raised:
        call(*args, **kwargs)
    assert type(raised.value) is exc
    assert str(raised.value) == message


@pytest.mark.clauses("F10", "B1", "S5")
def test_each_bad_naming_argument_is_refused_word_for_word() -> None:
    pools = ["mamba"]
    _refused(TypeError, "suffix must be a str, got int 5", EngineNaming, 5, pools=pools)
    start = "must start with '_' and hold no path separator or NUL, got"
    for bad in ("m_0_1", "_a/b", "_a\0b"):
        _refused(ValueError, f"suffix {start} {bad!r}", EngineNaming, bad, pools=pools)
    _refused(
        ValueError,
        "suffix cannot be encoded as part of a file name, got '_\\udcc3'",
        EngineNaming,
        "_\udcc3",
        pools=pools,
    )
    _refused(
        TypeError,
        "sharded_suffix must be a str, got int 5",
        EngineNaming,
        "_m",
        sharded_suffix=5,
        pools=pools,
    )
    _refused(ValueError, f"sharded_suffix {start} 'm'", EngineNaming, "_m", sharded_suffix="m", pools=pools)
    _refused(
        TypeError, "pools must be an iterable of str, got str 'mamba'", EngineNaming, "_m", pools="mamba"
    )
    _refused(TypeError, "pools must hold str, got int 5", EngineNaming, "_m", pools=[5])
    for pool in ("", "a.b", "a/b", "a\0b"):
        _refused(
            ValueError,
            f"pools must be non-empty names without '.', separator or NUL, got {pool!r}",
            EngineNaming,
            "_m",
            pools=[pool],
        )
    for tail in ("mamba", ".swa", "", ".", 5):
        _refused(
            ValueError,
            f"sharded_tail must be '.' and one of pools, got {tail!r}",
            EngineNaming,
            "_m",
            pools=pools,
            sharded_tail=tail,
        )
    _refused(
        TypeError, "owns_suffix must be a bool, got int 1", EngineNaming, "_m", pools=pools, owns_suffix=1
    )


@pytest.mark.clauses("F10", "F1")
def test_a_good_naming_takes_its_tail_from_its_pools_and_names_its_lock_by_its_own_suffix() -> None:
    """Any pool may be the sharded tail; the namespace (lock file, C6; fanout marker) is the rank's own."""
    swa = EngineNaming("_m", sharded_suffix="_m_0_2", pools=["mamba", "swa"], sharded_tail=".swa")
    assert swa.name("3fa9.swa") == "3fa9.swa_m_0_2.bin"
    assert swa.name("3fa9.mamba") == "3fa9.mamba_m.bin"
    assert swa.namespace == "_m_0_2"
    assert naming().namespace == "_m_0_2"
    assert EngineNaming("_m", pools=["mamba"], owns_suffix=False).key_of("3fa9_m.bin") == "3fa9"


@pytest.mark.clauses("F10", "F2", "B1", "S5")
def test_each_key_the_naming_cannot_hold_is_refused_word_for_word() -> None:
    name = naming()
    _refused(TypeError, "key must be a str, got int 5", name.check, 5)
    _refused(TypeError, "key must be a str, got bytes b'3fa9'", name.check, b"3fa9")
    form = "key must be a page hash without '_', path separator or NUL, optionally '.' and a pool's name, got"
    for key in ("", ".swa", "a_b", "a_b.swa", "a/b", "a\0b", "a.sw/a", "a.s\0wa"):
        _refused(ValueError, f"{form} {key!r}", name.check, key)
    _refused(
        ValueError,
        "key ends in a pool this store does not know ('unknown'), got 'a.unknown'",
        name.check,
        "a.unknown",
    )
    _refused(ValueError, "key ends in a pool this store does not know (''), got 'a.'", name.check, "a.")
    _refused(ValueError, "key cannot be encoded as a file name, got '\\udcc3'", name.check, "\udcc3")
    long = "x" * 300
    _refused(
        ValueError, f"key makes a file name of 310 bytes (limit 255), got {long!r:.100}", name.check, long
    )


@pytest.mark.clauses("F10", "F2", "S5")
def test_the_name_limit_is_met_exactly_for_plain_pool_and_encoded_keys() -> None:
    """F2: a key whose file name is exactly NAME_MAX (255) bytes is held, one byte more is refused, for a
    plain page hash, a key of a pool, the sharded suffix (the longer one) and a key of 2-byte characters."""
    name = naming()  # "_m_0_2.bin": 10 bytes
    mla = naming("_m", sharded_suffix="_m_0_2")  # the longer suffix, 10 bytes, bounds every key
    for n in (name, mla):
        for key in ("x" * 245, "x" * 239 + ".mamba", "x" * 241 + ".swa", "é" * 122 + "x"):
            n.check(key)
            assert len(os.fsencode(n.name(key))) <= 255
            _refused(
                ValueError,
                f"key makes a file name of 256 bytes (limit 255), got {'x' + key!r:.100}",
                n.check,
                "x" + key,
            )
    assert len(os.fsencode(mla.name("x" * 239 + ".mamba"))) == 255


@pytest.mark.clauses("F10", "F2", "B1")
def test_a_store_batch_refuses_a_key_that_is_not_a_str_word_for_word(
    fs: FakeFileSystem, clock: FakeClock
) -> None:
    s = store(fs, clock)
    _refused(TypeError, "key must be a str, got int 5", s.batch_exists, ["3fa9", 5])
    assert s.batch_exists([]) == 0
    assert s.batch_exists(["x" * 245]) == 0  # the longest key holds: asked, not refused
    _refused(
        ValueError,
        f"key makes a file name of 256 bytes (limit 255), got {'x' * 246!r:.100}",
        s.batch_exists,
        ["3fa9", "x" * 246],
    )


@pytest.mark.clauses("F10", "F1")
def test_key_of_reads_back_exactly_the_names_this_naming_writes() -> None:
    name = naming()
    keys = ["3fa9", "3fa9.swa", "3fa9.mamba", "3fa9.deepseek_v4_c1", "é"]
    assert name.keys_of([name.name(key) for key in keys]) == keys
    assert name.keys_of(["3fa9_m_0_2.bin", "other.bin", "3fa9_m_0_2", "a_b_m_0_2.bin", "_m_0_2.bin"]) == [
        "3fa9",
        None,
        None,
        None,
        None,
    ]
    assert name.key_of("x" * 246 + "_m_0_2.bin") is None  # a name too long for a key of ours


@pytest.mark.clauses("F10")
def test_repr_shows_the_arguments_as_the_constructor_takes_them() -> None:
    shown = repr(EngineNaming("_m", sharded_suffix="_m_0_2", pools=["swa", "mamba"]))
    assert shown == "EngineNaming('_m', sharded_suffix='_m_0_2', pools=['mamba', 'swa'])"
