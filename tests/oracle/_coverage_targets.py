"""Targets of the honest-coverage tests (O8); none of them is in the catalogue (spec/variants)."""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable
from typing import Any

from hicache.metadata_cache import MetadataCache
from spec.models.metadata_cache import refuse_bad_key, refuse_bad_settings
from spec.variants.file_evictor import OsEvictor

__all__ = ["RELEASE", "CallsBackAfterRemovalAndStops", "RefusesABound", "SpinsWhenFull"]

RELEASE = threading.Event()  # set: a spinning SpinsWhenFull.add returns (the tests set it at teardown)


class CallsBackAfterRemovalAndStops(OsEvictor):
    """Three mistakes the engine release's evictor makes: ``on_evict`` after the unlink (V6); a victim that
    cannot be removed ends the pass, uncalled (V5), and is tried again at once by the next one (S7)."""

    def remove(self, key: str) -> str:
        try:
            os.remove(self.path(key))
        except FileNotFoundError:
            self.on_evict(key)
            return "gone"
        except OSError:
            return "stop"
        self.on_evict(key)
        return "removed"


class RefusesABound(MetadataCache):
    """M1: a metadata cache whose constructor refuses any ``max_entries`` (it only runs unbounded)."""

    def __init__(self, ttl_seconds: float, **options: Any) -> None:
        refuse_bad_settings(ttl_seconds, options.get("max_entries"))  # B1 as M1 says: its mistake is the next
        if options.get("max_entries") is not None:
            raise ValueError(f"max_entries is not supported, got {options['max_entries']}")
        super().__init__(ttl_seconds, **options)


class SpinsWhenFull(MetadataCache):
    """A cache whose ``add`` spins forever once it holds ``max_entries`` beliefs (until ``RELEASE`` is set):
    the oracle must end the run with a FAIL instead of hanging."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1 first: the spin is its one mistake
        bound = self.max_entries
        while bound is not None and len(self._births) >= bound and not RELEASE.is_set():
            pass  # a spin in Python: a thread the oracle abandons here can be stopped at any bytecode
        super().add(key)
