"""The executable models of docs/SEMANTICS.md: a mapping and a few lines of rules per operation.

* :mod:`.metadata_cache` (M), :mod:`.existence_cache` (E), :mod:`.pool_beliefs` (P): the caches;
* :mod:`.file_store` (F, C), with :mod:`.file_evictor` (V) and :mod:`.file_names` (the pure functions
  of names and eviction passes that CrossHair checks);
* :mod:`.refusals` (B1): every bad-input refusal of the components, in one place.

Standard library only.  Everything else under ``spec/`` checks implementations against these.
"""
