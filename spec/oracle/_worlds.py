"""What one component's threads run on under ``--threads``: a :class:`World` per component.

A world gives the configurations a history is drawn from, the spec its history is judged against (a
linearizability spec of :mod:`spec.linearizability`), the scripts (seeded, weighted, drawn only from the
methods the probe found, O10), how a fresh target is built (its clock, its fake filesystem) and how one
call of a script is made on it (the engine form's way too, O12).  The mode (``_threads.py``) runs any
world the same way.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from ..linearizability.file_store import VALUE_OF, FileStoreHistorySpec, store_call
from ..linearizability.metadata_cache import MetadataCacheHistorySpec
from ..linearizability.scripts import Call, Pick, Script, always, below, weighted_scripts
from ..world.clock import FakeClock
from ..world.filesystem import FakeFileSystem
from ._session import Session

__all__ = ["START", "THREADED_COMPONENTS", "World", "worlds"]

START = 1000.0  # the fake clock's reading when a history starts
THREADED_COMPONENTS = ("metadata-cache", "file-store")


@dataclass
class World:
    """What one component's threads run on: its spec, the workload, and how a fresh target is built."""

    component: str
    configs: Callable[[Session], list[dict[str, Any]]]
    spec: Callable[[dict[str, Any], Session], Any]
    # scripts(rng, threads, length, config, offered): the calls drawn only from ``offered``, the spec
    # methods the probe found on the target and that are not left out (O10)
    scripts: Callable[[random.Random, int, int, dict[str, Any], frozenset[str]], list[Script]]
    init: Callable[[dict[str, Any], FakeClock], dict[str, Any]]
    clause: str  # the thread-safety clause: M7, C5
    # One call of a script on the target: perform(call, name, args) calls call(name, the target's spec
    # arguments) and gives the answer the spec gives (a batch's keys are the script's arguments).
    perform: Callable[[Callable[[str, tuple[Any, ...]], Any], str, tuple[Hashable, ...]], Any]
    batches: frozenset[str] = frozenset()  # operations whose tear is M9's too
    # O12: how a call is made on a target in the engine's form (None: as ``perform``)
    engine_perform: (
        Callable[[Callable[[str, tuple[Any, ...]], Any], str, tuple[Hashable, ...]], Any] | None
    ) = None

    def performer(
        self, session: Session
    ) -> Callable[[Callable[[str, tuple[Any, ...]], Any], str, tuple[Hashable, ...]], Any]:
        """The ``perform`` of this run: the engine form's where the probe found that form (O10)."""
        return self.engine_perform if session.probe.form == "engine" and self.engine_perform else self.perform


# -- metadata cache -----------------------------------------------------------------------------------

_MC_BATCHES = ("add_many", "contains_many", "contains_prefix", "remove_many")
_MC_TICKS = (0.25, 0.75)
# rng.choices' weights of the single calls
_MC_SINGLES = (("add", 6), ("contains", 5), ("remove", 1), ("__len__", 1), ("clear", 1))


def _mc_configs(session: Session) -> list[dict[str, Any]]:
    """TTL 0.5 with the clock moving by 0.25 or 0.75, bounded at 2 over three
    keys and unbounded over two, and TTL -1 bounded at 2; without what the target lacks."""
    configs: list[dict[str, Any]] = [
        {"ttl_seconds": 0.5, "max_entries": 2},
        {"ttl_seconds": 0.5, "max_entries": None},
        {"ttl_seconds": -1.0, "max_entries": 2},
        {"ttl_seconds": 0.5, "max_entries": 2},
    ]
    if "max_entries" in session.left_out:
        unbounded = [c for c in configs if c["max_entries"] is None]
        configs = unbounded or [{"ttl_seconds": 0.5, "max_entries": None}]
    return configs


def _mc_spec(config: dict[str, Any], session: Session) -> Any:
    eviction = session.declared.get("eviction", "birth")
    return MetadataCacheHistorySpec(config["ttl_seconds"], config["max_entries"], eviction=eviction)


def _mc_scripts(
    rng: random.Random, threads: int, length: int, config: dict[str, Any], offered: frozenset[str]
) -> list[Script]:
    """Mostly add/contains on three keys, some remove, len, clear and batches (those of them ``offered``);
    thread 0 moves the clock."""
    keys = ("a", "b", "c") if config["max_entries"] is not None else ("a", "b")
    moves = config["ttl_seconds"] >= 0
    singles = [(n, w) for n, w in _MC_SINGLES if n in offered]
    batches = [b for b in _MC_BATCHES if b in offered]

    def single(r: random.Random, key: Hashable) -> Call:
        name = r.choices([n for n, _ in singles], [w for _, w in singles])[0]
        return name, () if name in ("__len__", "clear") else (r.choice(keys),)

    picks = [
        Pick(
            lambda thread, roll, r: thread == 0 and moves and roll < 0.3,
            lambda r, k: ("advance", (r.choice(_MC_TICKS),)),
        ),
        *(
            [
                Pick(
                    lambda thread, roll, r: roll < 0.45 and r.random() < 0.5,
                    lambda r, k: (r.choice(batches), tuple(r.sample(keys, r.randint(1, 2)))),
                )
            ]
            if batches
            else []
        ),
        Pick(always, single),
    ]
    return weighted_scripts(rng, threads, length, picks)


def _mc_init(config: dict[str, Any], clock: FakeClock) -> dict[str, Any]:
    return dict(config)


def _mc_perform(call: Callable[[str, tuple[Any, ...]], Any], name: str, args: tuple[Hashable, ...]) -> Any:
    """A batch (M9) takes its keys as one list; ``contains_many``'s answer is the spec's list."""
    if name not in _MC_BATCHES:
        return call(name, args)
    result = call(name, (list(args),))
    if name == "contains_many" and isinstance(result, (tuple, list)):
        return [bool(r) for r in result]
    return result


# -- file store -------------------------------------------------------------------------------------

_FS_CAP = 6


def _fs_configs(session: Session) -> list[dict[str, Any]]:
    """Cap 6, ratio 1.0, the metadata cache on (TTL -1); with ``--settings``, the configuration pinned (the
    clock stands still under threads: a TTL >= 0 never ends a belief, as -1 does not)."""
    pinned = session.settings
    if pinned is None:
        return [{"cap": _FS_CAP}]
    return [
        {
            "cap": pinned["max_size"],
            "ratio": pinned["eviction_ratio"],
            "min_free": pinned["min_free_space"],
            "metadata": pinned["enable_metadata_cache"],
            "ttl": pinned["metadata_ttl"],
        }
    ]


def _fs_spec(config: dict[str, Any], session: Session) -> Any:
    return FileStoreHistorySpec(
        config["cap"],
        config.get("metadata", True),
        ratio=config.get("ratio", 1.0),
        min_free=config.get("min_free", 0),
    )


_FS_SIZES = (2, 3, 4)  # get_into's buffers: the values' sizes (VALUE_OF), one of them each key's own
# (threshold of the roll, operation): C5's calls, the batches over two or three distinct keys (F5)
_FS_CALLS = (
    (0.25, "set"),
    (0.37, "get"),
    (0.58, "exists"),
    (0.68, "delete"),
    (0.74, "get_into"),
    (0.82, "batch_set"),
    (0.88, "batch_get"),
    (0.96, "batch_exists"),
    (1.0, "clear"),
)


def _fs_scripts(
    rng: random.Random, threads: int, length: int, config: dict[str, Any], offered: frozenset[str]
) -> list[Script]:
    """C5's calls over three content-addressed keys (one value per key): mostly sets, gets, exists and
    deletes; some get_into (a buffer of each value's size), batches of two or three distinct keys, and
    clear; only those ``offered`` (a call the target lacks gives its share to the next one)."""
    keys = tuple(VALUE_OF)
    calls = [(bound, name) for bound, name in _FS_CALLS if name in offered]
    calls[-1] = (1.0, calls[-1][1])  # the table ends in a pick always taken

    def make(name: str) -> Callable[[random.Random, Hashable], Call]:
        if name == "get_into":
            return lambda r, key: (name, (key, r.choice(_FS_SIZES)))
        if name.startswith("batch_"):
            return lambda r, key: (name, tuple(r.sample(keys, r.randint(2, 3))))
        if name == "clear":
            return lambda r, key: (name, ())
        return store_call(name)

    picks = [Pick(below(bound), make(name)) for bound, name in calls]
    return weighted_scripts(rng, threads, length, picks, keys)


def _fs_perform(call: Callable[[str, tuple[Any, ...]], Any], name: str, args: tuple[Hashable, ...]) -> Any:
    """A batch takes its keys as one list (``batch_set`` their values too, ``VALUE_OF``); ``get_into``
    fills a fresh buffer of the script's size, and answers with what it read (None for False), the
    answer of the spec's ``get_into``; a batch's answers as a list."""
    if name == "get_into":
        key, size = args
        assert isinstance(size, int)
        buffer = bytearray(size)
        answer = call(name, (key, buffer))
        return bytes(buffer) if answer is True else None if answer is False else answer
    if name == "batch_set":
        answer = call(name, (list(args), [VALUE_OF[str(k)] for k in args]))
    elif name in ("batch_get", "batch_exists"):
        answer = call(name, (list(args),))
    else:
        return call(name, args)
    return list(answer) if isinstance(answer, tuple) else answer


def _fs_engine_perform(
    call: Callable[[str, tuple[Any, ...]], Any], name: str, args: tuple[Hashable, ...]
) -> Any:
    """O12 under threads: the engine reads a page into a target the caller sizes (its callers know a page's
    size), so a ``get`` is the engine's read into a target of the key's own size (``VALUE_OF``: one value
    per key in this world), a ``batch_get`` one such read per key in order (the engine's ``batch_get`` is
    that loop), a ``batch_set`` the engine's loop of sets, stopping at the first refused one (its answer:
    the attempted sets' answers; the engine's own answers one bool, which does not say which keys were
    written), and a ``get_into`` of another size is answered as the spec answers it (None) without a
    call: a read of a wrong size is F4's, which the sequential run checks (the engine fails it).  Without
    this, the shim's size (read from the world before the engine's own read) races the other threads'
    writes, and every history shows F4 again instead of the races C5 is about."""
    if name == "get":
        return _fs_engine_perform(call, "get_into", (args[0], len(VALUE_OF[str(args[0])])))
    if name == "batch_get":
        return [_fs_engine_perform(call, "get", (key,)) for key in args]
    if name == "batch_set":  # the engine's batch_set: its sets in order, none after the first refused
        answers: list[Any] = []
        for key in args:
            answers.append(call("set", (key, VALUE_OF[str(key)])))
            if answers[-1] is not True:
                break
        return answers
    if name == "get_into" and args[1] != len(VALUE_OF[str(args[0])]):
        return None
    return _fs_perform(call, name, args)


def _fs_init(config: dict[str, Any], clock: FakeClock) -> dict[str, Any]:
    extra = {
        "max_size": config["cap"],
        "eviction_ratio": config.get("ratio", 1.0),
        "enable_metadata_cache": config.get("metadata", True),
        "metadata_ttl": config.get("ttl", -1),
    }
    if config.get("min_free", 0):
        extra["min_free_space"] = config["min_free"]
    return {"storage_dir": "/cache", "namespace": "_ns", "extra_config": extra, "fs": FakeFileSystem(clock)}


def worlds() -> dict[str, World]:
    return {
        "metadata-cache": World(
            "metadata-cache",
            _mc_configs,
            _mc_spec,
            _mc_scripts,
            _mc_init,
            "M7",
            _mc_perform,
            frozenset(_MC_BATCHES),
        ),
        "file-store": World(
            "file-store",
            _fs_configs,
            _fs_spec,
            _fs_scripts,
            _fs_init,
            "C5",
            _fs_perform,
            engine_perform=_fs_engine_perform,
        ),
    }
