"""hicache: the storage-tier metadata caches of a hierarchical KV cache.

Standard library only; vendor it by copying this folder.
"""

from hicache.metadata_cache import MetadataCache, MetadataCacheStats

__all__ = ["MetadataCache", "MetadataCacheStats"]
