"""B1 without the oracle: every bad input and constructor setting the machines list (the ones the oracle
tries, issue 23 item 8) is refused by the spec, and by the production classes with the same exception type
and a message that names the parameter; the spec's F2 and F9 refusals are production's, value for value.

The spec says which inputs are bad (``refuse_bad_*`` in the models); the machines only list what to try.
Each check here is the machines' own (``try_bad_inputs``, ``assert_refused_as``), run once on a fresh
instance: no search, no Hypothesis example.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest

from hicache import HiCacheFile, MetadataCache, PooledExistenceCache, StorageExistenceCache
from hicache.file_config import load_file_config
from hicache.file_evictor import LRUFileEvictor
from spec.machines import existence_cache as e_machine
from spec.machines import file_evictor as v_machine
from spec.machines import file_store as f_machine
from spec.machines import metadata_cache as m_machine
from spec.machines import pool_beliefs as p_machine
from spec.machines._base import (
    BadSetting,
    Figures,
    assert_refused_as,
    parameter_named,
    refusal,
    try_bad_inputs,
)
from spec.models import metadata_cache as m
from spec.models.existence_cache import StorageExistenceCacheSpec, refuse_bad_capacity
from spec.models.file_evictor import refuse_bad_limits
from spec.models.file_store import FileStoreModel
from spec.models.pool_beliefs import PooledExistenceCacheSpec
from spec.models.refusals import SETTINGS, refuse_bad_call, refuse_bad_key, refuse_bad_settings
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem


def _world() -> FakeFileSystem:
    fs = FakeFileSystem(FakeClock(0.0))
    fs.mkdir("/d")
    return fs


def _model(fs: FakeFileSystem) -> FileStoreModel:
    limits: dict[str, Any] = {"cap": 10, "ratio": 1.0, "min_free": 0, "disk_size": 1 << 20}
    beliefs: dict[str, Any] = {"metadata": False, "ttl": -1, "temp_max_age": 0}
    return FileStoreModel(namespace="", clock=fs.now, **limits, **beliefs)


def _evictor(fs: FakeFileSystem, **limits: Any) -> LRUFileEvictor:
    settings = {"max_size": 10, "min_free_space": 0, "eviction_ratio": 1.0, **limits}
    return LRUFileEvictor(fs, lambda key: posixpath.join("/d", f"{key}.bin"), directory="/d", **settings)


def _store(fs: FakeFileSystem, **settings: Any) -> HiCacheFile:
    arguments: dict[str, Any] = {"storage_dir": "/cache", "namespace": "_ns", "extra_config": {}, **settings}
    return HiCacheFile(arguments.pop("storage_dir"), fs=fs, clock=fs.now, **arguments)


def _on_model(model: Any) -> Callable[..., object]:
    return lambda method, *args: getattr(model, method)(*args)


# component -> (the production instance, what the machine passes first, the bad inputs, the spec's call)
def _method_cases() -> Iterator[Any]:
    clock = FakeClock(0.0)
    yield pytest.param(
        MetadataCache(1.0, clock=clock, stats=True),
        (),
        m_machine.BAD_INPUTS,
        _on_model(m.MetadataCacheSpec(1.0, clock=clock)),
        id="metadata-cache",
    )
    for ttl, eviction in ((-1, "lru"), (1.0, "lru"), (-1, "birth")):  # every specialized contains
        yield pytest.param(
            MetadataCache(ttl, clock=clock, eviction=eviction),
            (),
            m_machine.BAD_INPUTS,
            _on_model(m.MetadataCacheSpec(ttl, clock=clock)),
            id=f"metadata-cache ttl={ttl} {eviction}",
        )
    unhashable = [b for b in e_machine.BAD_INPUTS if "unhashable" in b.label]
    hashable = [b for b in e_machine.BAD_INPUTS if "unhashable" not in b.label]
    model = _on_model(StorageExistenceCacheSpec(4))
    yield pytest.param(StorageExistenceCache(4), ("p",), hashable, model, id="existence-cache")
    yield pytest.param(StorageExistenceCache(4), ([],), unhashable, model, id="existence-cache pool")
    registry = PooledExistenceCacheSpec(4)
    pool = _on_model(registry.pool("kv"))
    yield pytest.param(PooledExistenceCache(4).pool("kv"), (), p_machine.POOL_BAD_INPUTS, pool, id="pool")
    names = p_machine.UNHASHABLE_NAME
    yield pytest.param(PooledExistenceCache(4), (), names, _on_model(registry), id="registry")
    fs = _world()
    evictor, spec = _evictor(fs), _on_model(_model(fs))
    yield pytest.param(evictor, (), v_machine.BAD_INPUTS, spec, id="file-evictor")
    store, spec = _store(_world()), lambda method, *args: refuse_bad_call(method, *args, namespace="_ns")
    yield pytest.param(store, (), f_machine.BAD_INPUTS, spec, id="file-store")


@pytest.mark.clauses("B1", "M3", "M9", "E1", "E5", "E6", "E8", "P1", "V3", "F2", "F5", "S5")
@pytest.mark.parametrize(("target", "first", "inputs", "spec"), list(_method_cases()))
def test_production_refuses_every_bad_input_as_the_spec_does_naming_the_parameter(
    target: Any, first: tuple[Any, ...], inputs: Any, spec: Callable[..., object]
) -> None:
    seen = Figures()
    try_bad_inputs(seen, target, inputs, spec, *first)
    assert seen.bad_inputs == {b.label for b in inputs}  # every one tried (the production has them all)


def _settings_cases() -> Iterator[Any]:
    clock = FakeClock(0.0)

    def metadata(settings: dict[str, Any]) -> object:
        arguments = {"ttl_seconds": 1.0, "clock": clock, **settings}
        return MetadataCache(arguments.pop("ttl_seconds"), **arguments)

    def metadata_spec(settings: dict[str, Any]) -> object:
        return m.refuse_bad_settings(**{"ttl_seconds": 1.0, **settings})

    yield pytest.param(m_machine.BAD_SETTINGS, metadata, metadata_spec, id="metadata-cache")

    def capacity(settings: dict[str, Any]) -> None:
        refuse_bad_capacity(settings["max_entries"])

    for name, target in (("existence-cache", StorageExistenceCache), ("pool-beliefs", PooledExistenceCache)):
        yield pytest.param(e_machine.BAD_SETTINGS, lambda s, t=target: t(**s), capacity, id=name)
    assert p_machine.BAD_SETTINGS == e_machine.BAD_SETTINGS

    def evictor(settings: dict[str, Any]) -> object:
        return _evictor(_world(), **settings)

    def limits(settings: dict[str, Any]) -> None:
        refuse_bad_limits(**{"max_size": 10, "min_free_space": 0, "eviction_ratio": 1.0, **settings})

    yield pytest.param(v_machine.BAD_SETTINGS, evictor, limits, id="file-evictor")

    def store(settings: dict[str, Any]) -> object:
        return _store(_world(), **settings)

    def store_spec(settings: dict[str, Any]) -> None:
        refuse_bad_settings(**{"storage_dir": "/cache", "namespace": "_ns", **settings})

    yield pytest.param(f_machine.BAD_SETTINGS, store, store_spec, id="file-store")


@pytest.mark.clauses("B1", "M1", "E1", "P1", "V1", "F1", "F9", "S1")
@pytest.mark.parametrize(("settings", "build", "spec"), list(_settings_cases()))
def test_production_refuses_every_bad_constructor_setting_as_the_spec_does(
    settings: tuple[BadSetting, ...],
    build: Callable[[dict[str, Any]], object],
    spec: Callable[[dict[str, Any]], object],
) -> None:
    assert settings
    for bad in settings:
        want = refusal(partial(spec, dict(bad.settings)))
        assert isinstance(want, (TypeError, ValueError)), (bad.label, want)
        named = parameter_named(want)  # the first word of the spec's message
        assert named in (*bad.settings, *SETTINGS), (bad.label, want)
        assert_refused_as(partial(build, dict(bad.settings)), want, f"constructor {bad.label}")


@pytest.mark.clauses("B1", "F2", "S5")
@pytest.mark.parametrize(
    "key",
    [
        *("a", "a_b", "%", "é", "\udcff", "", ".", ".a", "a/b", "a\0", "/"),
        *("k" * 251, "k" * 252, "_" * 83, 5, None),
    ],
)
@pytest.mark.parametrize("namespace", ["", "_ns"])
def test_the_specs_key_check_is_productions(key: Any, namespace: str) -> None:
    store = _store(_world(), namespace=namespace)
    got = refusal(lambda: store._check_key(key))
    want = refusal(lambda: refuse_bad_key(key, namespace))
    assert type(got) is type(want), (got, want)
    if want is not None and got is not None:
        assert parameter_named(want) == parameter_named(got) == "key"


_VALUES = [
    *(-1, 0, 1, 2**63 - 1, 2**63, 10**400, 1.5, 0.0, -2, 3600, math.nan, math.inf, True, False, None, b"x"),
    *("", "  ", "x", "12Q", "1.5", "1.5G", "1Gi", "200gb", "1e3", "nan", "inf", "-1", "0.5", "0"),
    *("maybe", "yes", " On ", "birth", "LRU", "flat", "fanout", "tree", "/tmp/x", "a\0b"),
]


@pytest.mark.clauses("B1", "F9", "S1")
@pytest.mark.parametrize("setting", SETTINGS)
def test_the_specs_settings_refuse_what_productions_configuration_refuses(setting: str) -> None:
    for value in _VALUES:
        got = refusal(partial(load_file_config, {setting: value}, environ={}))
        want = refusal(partial(refuse_bad_settings, "/x", "", {setting: value}))
        assert type(got) is type(want), (setting, value, got, want)
        if want is not None:
            assert setting in str(got) and parameter_named(want) == setting, (got, want)


# -- production's messages, where the checks were missing before issue 23 -----------------------------


@pytest.mark.clauses("B1", "M3", "M9")
def test_the_metadata_cache_names_an_unhashable_key_and_keys_that_are_not_iterable() -> None:
    cache: Any = MetadataCache(1.0, clock=FakeClock(0.0))
    for single in (cache.add, cache.contains, cache.remove):
        with pytest.raises(TypeError, match=r"^key must be hashable, got list \[\]$"):
            single([])
    for batch in (cache.add_many, cache.contains_many, cache.contains_prefix, cache.remove_many):
        with pytest.raises(TypeError, match=r"^keys must be an iterable of keys, got int 5$"):
            batch(5)
        with pytest.raises(TypeError, match=r"^key must be hashable, got list \[\]$"):
            batch(["a", []])
        with pytest.raises(TypeError, match=r"^key must be hashable \(a key of keys\)"):
            batch(iter([[]]))  # an iterator already read: the message says what it can


@pytest.mark.clauses("B1", "M1")
def test_a_clock_that_raises_a_type_error_is_not_taken_for_a_bad_key() -> None:
    noon: Any = lambda: "noon"  # noqa: E731 -- a clock that answers no number
    cache = MetadataCache(1.0, clock=noon)
    with pytest.raises(TypeError, match="unsupported operand") as raised:
        cache.contains("a")
    assert "key" not in str(raised.value)


@pytest.mark.clauses("B1", "F5")
def test_the_file_store_names_batch_keys_and_values_that_are_not_iterable() -> None:
    fs = _world()
    store: Any = _store(fs)
    calls = sum(fs.calls.values())
    batches = (partial(store.batch_get, 5), partial(store.batch_exists, 5), partial(store.batch_set, 5, []))
    for call in batches:
        with pytest.raises(TypeError, match=r"^keys must be an iterable, got int 5$"):
            call()
    with pytest.raises(TypeError, match=r"^values must be an iterable, got int 5$"):
        store.batch_set(["a"], 5)
    assert sum(fs.calls.values()) == calls  # before any I/O (F5)
