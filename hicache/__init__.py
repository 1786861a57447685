"""hicache: the storage-tier metadata caches of a hierarchical KV cache.

Standard library only; vendor it by copying this folder.
"""

from hicache.file_config import FileStoreConfig, load_file_config, parse_size
from hicache.metadata_cache import MetadataCache, MetadataCacheStats

__all__ = ["FileStoreConfig", "MetadataCache", "MetadataCacheStats", "load_file_config", "parse_size"]
