"""The engine's storage modules for the engine-backend tests (F10): loaded once from the cached wheel, with
torch; a test that needs them is skipped, saying why, when either is missing."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from benchmarks import engine_wheel


@dataclass
class Engine:
    """The engine's modules, and ``hicache_sglang`` imported against them."""

    storage: ModuleType  # sglang.srt.mem_cache.hicache_storage
    factory: Any  # StorageBackendFactory
    backend: ModuleType  # hicache_sglang
    torch: ModuleType

    def config(self, directory: str, *, model: str = "org/model", **kwargs: Any) -> Any:
        """A ``HiCacheStorageConfig`` of a one-rank, non-MLA model over ``directory`` with the metadata
        cache on; ``extra`` entries and fields (``tp_rank=``, ``is_mla_model=``...) in ``kwargs``."""
        extra = {"file_storage_path": directory, "enable_metadata_cache": True, **kwargs.pop("extra", {})}
        fields: dict[str, Any] = {
            "tp_rank": 0,
            "tp_size": 1,
            "pp_rank": 0,
            "pp_size": 1,
            "attn_cp_rank": 0,
            "attn_cp_size": 1,
            "is_mla_model": False,
            "enable_storage_metrics": False,
            "is_page_first_layout": True,
            "model_name": model,
            "extra_config": extra,
        }
        fields.update(kwargs)
        return self.storage.HiCacheStorageConfig(**fields)

    def dynamic(self, directory: str, **kwargs: Any) -> Any:
        """The reference store, made by the engine's factory as the ``dynamic`` backend."""
        factory_keys = {
            "backend_name": "reference",
            "module_path": "hicache_sglang",
            "class_name": "HiCacheReferenceStore",
            "interface_v1": 0,
        }
        kwargs["extra"] = {**factory_keys, **kwargs.get("extra", {})}
        return self.factory.create_backend("dynamic", self.config(directory, **kwargs), None)

    def engine_file(self, directory: str, **kwargs: Any) -> Any:
        """The engine's own ``HiCacheFile`` on ``directory``."""
        return self.storage.HiCacheFile(self.config(directory, **kwargs), directory)


def load() -> Iterator[Engine]:
    """Body of the session fixture: skip (saying why) without torch or the wheel; unload at the end."""
    try:
        import torch
    except ImportError as error:
        pytest.skip(f"torch is not installed ({error}); make torch-path links Debian's into .venv")
    try:
        storage = engine_wheel.load_engine_storage()
    except engine_wheel.WheelUnavailable as error:
        pytest.skip(str(error))
    for name in [n for n in sys.modules if n == "hicache_sglang" or n.startswith("hicache_sglang.")]:
        del sys.modules[name]  # made against another load of the engine: its base class is not this one
    from sglang.srt.mem_cache.storage.backend_factory import StorageBackendFactory

    import hicache_sglang

    try:
        yield Engine(storage, StorageBackendFactory, hicache_sglang, torch)
    finally:
        for name in [n for n in sys.modules if n == "hicache_sglang" or n.startswith("hicache_sglang.")]:
            del sys.modules[name]
        engine_wheel.unload_engine_storage()


class HostPool:
    """A host pool as the v2 calls use one: ``page_size`` slots per page, a flat page a 1-D tensor."""

    def __init__(self, torch: ModuleType, pages: int, page_size: int, slot: int, dtype: Any) -> None:
        self.page_size = page_size
        self.slot = slot
        self.data = torch.zeros(pages * page_size, slot, dtype=dtype)
        self.torch = torch

    def get_dummy_flat_data_page(self) -> Any:
        return self.torch.zeros(self.page_size * self.slot, dtype=self.data.dtype)

    def set_from_flat_data_page(self, offset: int, page: Any) -> None:
        self.data[offset : offset + self.page_size] = page.reshape(self.page_size, self.slot)

    def get_data_page(self, offset: int, flat: bool = True) -> Any:
        return self.data[offset : offset + self.page_size].flatten()
