"""HiCacheReferenceStore: the reference file store as the engine's ``dynamic`` storage backend (F10).

Runs :class:`hicache.HiCacheFile` inside the engine in place of the engine's own ``HiCacheFile``, on the
same directory and file names (an :class:`hicache.EngineNaming` made from the storage config as the
engine makes its suffixes), so that either store reads the pages the other wrote.  The engine's factory
builds it as ``backend_class(storage_config, kwargs)``.  A tensor of any dtype is stored as its raw bytes;
``get`` reads into the tensor given only a file of exactly its size (F4).  ``extra_config`` takes the
engine's keys and the reference's own (:mod:`hicache.file_config`; precedence F9); an unknown key is a
``ValueError`` listing the known ones.

Errors: bad arguments raise ``TypeError``/``ValueError`` naming the parameter before any I/O (B1); an I/O
failure is an answer (None, False, a shorter prefix) plus a log line, never a raise (B2).  Complexity and
thread model: as ``HiCacheFile``; the v2 calls are O(pages x pools).  Details: docs/ARCHITECTURE.md,
"Design notes".
"""

from __future__ import annotations

import ctypes
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, cast

import torch
from sglang.srt.mem_cache.hicache_storage import (
    HiCacheStorage,
    HiCacheStorageConfig,
    HiCacheStorageExtraInfo,
    PoolHitPolicy,
    PoolName,
    PoolTransfer,
    PoolTransferResult,
)

from hicache import EngineNaming, HiCacheFile
from hicache.file_config import SETTING_NAMES

__all__ = ["ENGINE_KEYS", "FACTORY_KEYS", "HiCacheReferenceStore", "engine_naming"]

logger = logging.getLogger(__name__)

FACTORY_KEYS = frozenset({"backend_name", "module_path", "class_name", "interface_v1"})  # ignored
ENGINE_KEYS = frozenset(
    {
        "file_storage_path",
        "max_size",
        "min_free_space",
        "eviction_ratio",
        "enable_metadata_cache",
        "metadata_ttl",
    }
)
_KNOWN = sorted(ENGINE_KEYS | set(SETTING_NAMES))
_SHARDED_POOL = PoolName.MAMBA.value  # TP-sharded state: named with the tp suffix even under MLA


def _clock() -> float:
    """Return the belief clock, looked up at call time (a checker may patch this module's ``time``)."""
    return time.monotonic()


def engine_naming(config: HiCacheStorageConfig) -> EngineNaming:
    """Return the engine's file names for ``config``: its ``config_suffix`` and ``tp_config_suffix``."""
    model = "-".join(config.model_name.split("/")) if config.model_name else ""
    shard = f"_{config.pp_size}_{config.pp_rank}" if config.pp_size > 1 else ""
    if config.attn_cp_size > 1:
        shard += f"_cp{config.attn_cp_rank}_{config.attn_cp_size}"
    sharded = f"_{model}_{config.tp_rank}_{config.tp_size}{shard}"
    suffix = f"_{model}{shard}" if config.is_mla_model else sharded
    if config.dcp_size > 1:
        dcp = f"_tp{config.tp_size}_dcp{config.dcp_rank}_{config.dcp_size}_page{config.logical_page_size}"
        suffix, sharded = suffix + dcp, sharded + dcp
    owns = not config.is_mla_model or config.is_storage_writer
    pools = [pool.value for pool in PoolName if pool is not PoolName.KV]
    return EngineNaming(
        suffix, sharded_suffix=sharded, sharded_tail=f".{_SHARDED_POOL}", pools=pools, owns_suffix=owns
    )


def _settings(extra: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``HiCacheFile``'s ``extra_config`` made from the engine's.

    The factory's keys are dropped, the directory renamed; TypeError for a key that is not a ``str``,
    ValueError for an unknown key (listing the known ones) or two different directories.
    """
    for key in extra:  # B1: a key of the wrong type is a TypeError, before any unknown name
        if not isinstance(key, str):
            raise TypeError(f"extra_config keys must be str, got {type(key).__name__} {key!r}")
    unknown = sorted(str(key) for key in extra if key not in FACTORY_KEYS and key not in _KNOWN)
    if unknown:
        raise ValueError(f"extra_config has unknown key(s) {unknown}; known: {_KNOWN} and the factory's")
    settings = {key: value for key, value in extra.items() if key not in FACTORY_KEYS}
    if "file_storage_path" in settings:
        path = settings.pop("file_storage_path")
        other = settings.get("storage_dir", path)
        if not isinstance(other, (str, os.PathLike)):  # B1: a wrong type is a TypeError, named
            raise TypeError(
                f"storage_dir must be a str or os.PathLike of str, got {type(other).__name__} {other!r}"
            )
        if settings.setdefault("storage_dir", path) != path:
            raise ValueError(
                f"extra_config names two directories: file_storage_path {path!r},"
                f" storage_dir {settings['storage_dir']!r}"
            )
    return settings


def _pool_name(name: object) -> str:
    return name.value if isinstance(name, Enum) else str(name)


class HiCacheReferenceStore(HiCacheStorage):  # type: ignore[misc]
    """The reference ``HiCacheFile`` behind the engine's ``HiCacheStorage`` interface (F10).

    ``storage_config``: the engine's ``HiCacheStorageConfig``; ``kwargs``: what the factory passes on
    (accepted, unused).  ``TypeError``/``ValueError`` naming the parameter on bad arguments; ``OSError``
    when the directory cannot be made or listed (a store that can never work should not look healthy).
    """

    def __init__(self, storage_config: HiCacheStorageConfig, kwargs: Mapping[str, Any] | None = None) -> None:
        if not isinstance(storage_config, HiCacheStorageConfig):
            raise TypeError(
                f"storage_config must be a HiCacheStorageConfig, got {type(storage_config).__name__}"
            )
        if kwargs is not None and not isinstance(kwargs, Mapping):
            raise TypeError(f"kwargs must be a mapping or None, got {type(kwargs).__name__}")
        extra = storage_config.extra_config or {}
        if not isinstance(extra, Mapping):
            raise TypeError(f"storage_config.extra_config must be a dict, got {type(extra).__name__}")
        self._naming = engine_naming(storage_config)
        self._store = HiCacheFile(None, extra_config=_settings(extra), naming=self._naming, clock=_clock)

    @property
    def store(self) -> HiCacheFile:
        """The file layer (read its ``evictor``, ``directory``; do not write through it)."""
        return self._store

    def file_name(self, key: str) -> str:
        """Return ``key``'s file name (ValueError naming ``key`` when the engine's names cannot hold it)."""
        return self._store.file_name(key)

    # -- the generic v1 calls -------------------------------------------------------------------------

    def exists(self, key: str) -> bool:
        """F6: a live belief answers with no filesystem call; else one ``stat``."""
        return self._store.exists(key)

    def batch_exists(self, keys: list[str], extra_info: HiCacheStorageExtraInfo | None = None) -> int:
        """F5: the number of leading keys whose pages exist."""
        return self._store.batch_exists(keys)

    def get(self, key: str, target_location: Any = None, target_sizes: Any = None) -> torch.Tensor | None:
        """Fill ``target_location`` from ``key``'s page and return it, or None (F4).

        None when the page is missing, of another size, or on an I/O failure (logged).
        """
        view, staged = _writable(target_location, "target_location")
        if not self._store.get_into(key, view):
            return None
        if staged is not None:
            target_location.copy_(staged)
        return cast("torch.Tensor", target_location)  # the engine passes it untyped

    def batch_get(
        self, keys: list[str], target_locations: Any = None, target_sizes: Any = None
    ) -> list[torch.Tensor | None]:
        """F5: ``get`` of each key into its target, in order; every key is checked before any I/O."""
        keys, targets = _pairs(keys, target_locations, "target_locations")
        for key in keys:
            self._naming.check(key)
        return [self.get(key, target) for key, target in zip(keys, targets, strict=True)]

    def set(self, key: str, value: Any = None, target_location: Any = None, target_sizes: Any = None) -> bool:
        """Store ``value`` (a tensor of any dtype, or bytes) as raw bytes under ``key`` (F3).

        True when it is on disk (or already was), False on an I/O failure or no room (logged).
        """
        self._naming.check(key)
        return self._store.set(key, _readable(value, "value"))

    def batch_set(
        self, keys: list[str], values: Any = None, target_locations: Any = None, target_sizes: Any = None
    ) -> bool:
        """Apply ``set`` to each pair in order, stopping at the first that fails (F5).

        The engine's answer: one bool for the batch.  Every key and value is checked before any I/O.
        """
        keys, values = _pairs(keys, values, "values")
        for key in keys:
            self._naming.check(key)
        views = [_readable(value, "values") for value in values]
        return all(self._store.set(key, view) for key, view in zip(keys, views, strict=True))

    def clear(self) -> bool:
        """F7: remove every page of this rank's names (only those); True when all went."""
        return self._store.clear()

    def close(self) -> None:
        """F8-bg: stop a background start-up scan; the store stays usable."""
        self._store.close()

    # -- the v2 calls ---------------------------------------------------------------------------------

    def batch_exists_v2(
        self,
        keys: list[str],
        pool_transfers: list[PoolTransfer] | None = None,
        extra_info: HiCacheStorageExtraInfo | None = None,
    ) -> PoolTransferResult:
        """Return the longest KV prefix whose pages exist, cut by each pool's hit policy.

        ``ALL_PAGES``: every page of the prefix; ``TRAILING_PAGES``: the last ``len(keys)`` pages of it;
        as the engine's ``HiCacheFile`` answers.  ValueError naming ``pool_transfers`` for another policy.
        """
        transfers = list(pool_transfers or [])
        for transfer in transfers:
            if transfer.hit_policy not in (PoolHitPolicy.ALL_PAGES, PoolHitPolicy.TRAILING_PAGES):
                policy, pool = transfer.hit_policy, transfer.name
                raise ValueError(f"pool_transfers: unsupported hit policy {policy!r} of pool {pool!r}")
            for key in keys:
                self._naming.check(_component(key, transfer.name))
        kv_pages = self._store.batch_exists(keys)
        hits: dict[Any, int] = {PoolName.KV: kv_pages} if kv_pages else {}
        restorable = list(range(1, kv_pages + 1))
        for transfer in transfers:
            if not restorable:
                break
            names = [_component(key, transfer.name) for key in keys[:kv_pages]]
            if transfer.hit_policy == PoolHitPolicy.ALL_PAGES:
                boundary = self._store.batch_exists(names)
                allowed = set(range(1, boundary + 1))
            else:
                window = max(1, len(transfer.keys) if transfer.keys else 1)
                allowed, run = set(), 0
                for length, name in enumerate(names, start=1):
                    run = run + 1 if self._store.exists(name) else 0
                    if run >= min(window, length):
                        allowed.add(length)
                boundary = max(allowed, default=0)
            if boundary:
                hits[transfer.name] = boundary
            restorable = [length for length in restorable if length in allowed]
        return PoolTransferResult(restorable[-1] if restorable else 0, hits, restorable)

    def batch_get_v2(
        self, transfers: list[PoolTransfer], extra_info: HiCacheStorageExtraInfo | None = None
    ) -> dict[Any, list[bool]]:
        """Each transfer's pages read into its host pool; per pool, one bool per key (a miss: False)."""
        return self._batch_io_v2(transfers, self._read_page)

    def batch_set_v2(
        self, transfers: list[PoolTransfer], extra_info: HiCacheStorageExtraInfo | None = None
    ) -> dict[Any, list[bool]]:
        """Each transfer's pages written from its host pool; per pool, one bool per key."""
        return self._batch_io_v2(transfers, self._write_page)

    def _read_page(self, pool: Any, key: str, host_pool: Any, offset: int) -> bool:
        page = self.get(key, host_pool.get_dummy_flat_data_page())
        if page is None:
            return False
        host_pool.set_from_flat_data_page(offset, page)
        return True

    def _write_page(self, pool: Any, key: str, host_pool: Any, offset: int) -> bool:
        return self.set(key, host_pool.get_data_page(offset, flat=True))

    def _batch_io_v2(self, transfers: Sequence[PoolTransfer], page_io: Any) -> dict[Any, list[bool]]:
        for transfer in transfers:
            for key in transfer.keys or []:
                self._naming.check(_component(key, transfer.name))
        pools: Mapping[Any, Any] = getattr(self, "registered_pools", {})
        results: dict[Any, list[bool]] = {}
        for transfer in transfers:
            keys = transfer.keys or []
            host_pool = pools.get(transfer.name)
            page_size = (getattr(host_pool, "page_size", 1) or 1) if host_pool is not None else 1
            indices = transfer.host_indices
            if host_pool is None or indices is None or indices.numel() != len(keys) * page_size:
                logger.error(
                    "%s: pool %s not registered or host indices for %d pages of %d do not match: none moved",
                    page_io.__name__,
                    transfer.name,
                    len(keys),
                    page_size,
                )
                results[transfer.name] = [False] * len(keys)
                continue
            results[transfer.name] = [
                page_io(transfer.name, _component(key, transfer.name), host_pool, int(indices[i * page_size]))
                for i, key in enumerate(keys)
            ]
        return results


def _component(key: str, pool: object) -> str:
    """Return the storage key of ``key``'s page of ``pool``: the key itself for KV, else ``<key>.<pool>``."""
    name = _pool_name(pool)
    return key if name in ("__default__", PoolName.KV.value) else f"{key}.{name}"


def _pairs(keys: Iterable[str], items: Any, name: str) -> tuple[list[str], list[Any]]:
    if isinstance(keys, str) or not isinstance(keys, Iterable):
        raise TypeError(f"keys must be a list of str, got {type(keys).__name__}")
    keys = list(keys)
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise TypeError(f"{name} must be a list with one item per key, got {type(items).__name__}")
    items = list(items)
    if len(items) != len(keys):
        raise ValueError(f"{name} must have one item per key: {len(keys)} keys, {len(items)} {name}")
    return keys, items


# ctypes array types by byte size, for views of a tensor's memory; bounded, since sizes are few (pages)
_ARRAYS: dict[int, type[ctypes.Array[ctypes.c_ubyte]]] = {}
_MAX_ARRAY_TYPES = 64


def _byte_view(tensor: torch.Tensor) -> memoryview:
    """Return the bytes of a contiguous CPU tensor of any dtype, shared (no copy).

    The view does not keep ``tensor`` alive: the caller holds the tensor while it uses the view.  (A
    view through ``numpy()`` would, at about three times the cost, on every page read and written.)
    """
    size = tensor.numel() * tensor.element_size()
    array = _ARRAYS.get(size)
    if array is None:
        array = ctypes.c_ubyte * size
        if len(_ARRAYS) < _MAX_ARRAY_TYPES:
            _ARRAYS[size] = array
    return memoryview(array.from_address(tensor.data_ptr())).cast("B")


def _readable(value: object, name: str) -> memoryview:
    if isinstance(value, torch.Tensor):
        if not value.is_cpu:
            raise ValueError(f"{name} must be a CPU tensor, got one on {value.device}")
        if value.is_contiguous():
            return _byte_view(value)  # the caller holds ``value`` for the call
        copy = value.contiguous()  # a temporary: this view keeps it alive
        return memoryview(copy.view(torch.uint8).reshape(-1).numpy())
    if isinstance(value, (bytes, bytearray, memoryview)):
        return memoryview(value)
    raise TypeError(f"{name} must be a torch.Tensor or bytes-like, got {type(value).__name__}")


def _writable(target: object, name: str) -> tuple[memoryview, torch.Tensor | None]:
    """Return the bytes to read into for ``target``, and the contiguous copy to copy back from (or None)."""
    if not isinstance(target, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor (the page's shape and dtype), got {type(target).__name__}"
        )
    if not target.is_cpu:
        raise ValueError(f"{name} must be a CPU tensor, got one on {target.device}")
    if target.is_contiguous():
        return _byte_view(target), None
    staged = target.contiguous()
    return _byte_view(staged), staged
