"""Lock-step refinement of MetadataCache against its spec (M2-M6, M8).

The same machine runs over the production class and over the spec itself (the
spec must trivially conform: that checks the machine, not the spec).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hicache import MetadataCache
from spec.machines import run_machine
from spec.machines.metadata_cache import metadata_cache_machine
from spec.metadata_cache import MetadataCacheSpec


def production_with_counters(ttl: float, **kwargs: Any) -> MetadataCache:
    return MetadataCache(ttl, stats=True, **kwargs)


IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {
    "production": production_with_counters,
    "production-no-counters": MetadataCache,
    "spec": MetadataCacheSpec,
}


@pytest.mark.clauses("M2", "M3", "M4", "M5", "M6", "M8")
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_metadata_cache_refines_the_spec_in_lock_step(
    name: str, record_property: Callable[[str, object], None]
) -> None:
    figures = run_machine(metadata_cache_machine(IMPLEMENTATIONS[name]))
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0
