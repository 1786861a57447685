"""Lock-step refinement of PooledExistenceCache / PoolExistenceBeliefs against their spec (P1-P5, B1).

The same machine runs over the production registry and over the spec itself.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import settings

from hicache import PooledExistenceCache
from spec.machines import run_machine
from spec.machines.pool_beliefs import PoolBeliefsMachine
from spec.models.pool_beliefs import PooledExistenceCacheSpec
from tests.stateful import implementations

MACHINES = {
    "production": PoolBeliefsMachine.over(PooledExistenceCache),
    "spec": PoolBeliefsMachine.over(PooledExistenceCacheSpec),
}


@pytest.mark.clauses("P1", "P2", "P3", "P4", "P5", "E8", "B1")
@pytest.mark.parametrize("name", implementations(MACHINES))
def test_pool_beliefs_refine_the_spec_in_lock_step(
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
