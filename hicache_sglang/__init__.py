"""hicache_sglang: the reference file store inside the engine, as a ``dynamic`` storage backend (F10).

Needs the engine's own install (torch and sglang); ``hicache`` itself stays standard library only.
Run the engine with ``--hicache-storage-backend dynamic`` and an extra config naming
``"module_path": "hicache_sglang", "class_name": "HiCacheReferenceStore"`` (README, "Inside the engine").
"""

from hicache_sglang.reference_store import ENGINE_KEYS, FACTORY_KEYS, HiCacheReferenceStore, engine_naming

__all__ = ["ENGINE_KEYS", "FACTORY_KEYS", "HiCacheReferenceStore", "engine_naming"]
