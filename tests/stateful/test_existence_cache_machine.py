"""Lock-step refinement of StorageExistenceCache against its spec (E1-E8, B1).

The same machine runs over the production class and over the spec itself (the
spec must trivially conform: that checks the machine, not the spec).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import settings

from hicache import StorageExistenceCache
from spec.machines import run_machine
from spec.machines.existence_cache import StorageExistenceCacheMachine
from spec.models.existence_cache import StorageExistenceCacheSpec
from tests.stateful import implementations

MACHINES = {
    "production": StorageExistenceCacheMachine.over(StorageExistenceCache),
    "spec": StorageExistenceCacheMachine.over(StorageExistenceCacheSpec),
}


@pytest.mark.clauses("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "B1")
@pytest.mark.parametrize("name", implementations(MACHINES))
def test_existence_cache_refines_the_spec_in_lock_step(
    name: str, record_property: Callable[[str, object], None]
) -> None:
    # The spec conforming to itself checks the machine, not the spec: a small budget is enough.  Production
    # is capped at 600 examples so that the verify profile's 1500 does not take minutes on two shared cores.
    examples = 100 if name == "spec" else min(settings().max_examples, 600)
    budget = settings(parent=settings(), max_examples=examples)
    figures = run_machine(MACHINES[name], budget)
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0
