"""hicache: the storage-tier metadata caches of a hierarchical KV cache.

Standard library only; vendor it by copying this folder.
"""

from hicache.existence_cache import StorageExistenceCache
from hicache.file_config import FileStoreConfig, load_file_config, parse_size
from hicache.file_evictor import LRUFileEvictor
from hicache.file_naming import EngineNaming
from hicache.file_store import HiCacheFile
from hicache.metadata_cache import MetadataCache, MetadataCacheStats
from hicache.pool_beliefs import PooledExistenceCache, PoolExistenceBeliefs
from hicache.trace import TraceRecorder

__all__ = [
    "EngineNaming",
    "FileStoreConfig",
    "HiCacheFile",
    "LRUFileEvictor",
    "MetadataCache",
    "MetadataCacheStats",
    "PoolExistenceBeliefs",
    "PooledExistenceCache",
    "StorageExistenceCache",
    "TraceRecorder",
    "load_file_config",
    "parse_size",
]
