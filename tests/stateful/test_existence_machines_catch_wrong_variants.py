"""The E and P machines can fail: each deliberately wrong variant is caught (E1-E8, P1-P5).

A variant that slipped through would mean the machine's rules or its
comparison miss the behaviour the variant breaks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, settings

from spec.machines import run_machine
from spec.machines.existence_cache import StorageExistenceCacheMachine
from spec.machines.pool_beliefs import PoolBeliefsMachine
from spec.variants.existence_cache import WRONG_MODEL as E_VARIANTS
from spec.variants.pool_beliefs import WRONG_MODEL as P_VARIANTS

# Finding is enough: skip shrinking and the example database to keep this fast and repeatable.
CATCH = settings(
    parent=settings.get_profile("dev"),
    max_examples=1000,
    stateful_step_count=30,
    phases=(Phase.explicit, Phase.generate),
    database=None,
)


def _caught(machine: Any) -> bool:
    try:
        run_machine(machine, CATCH)
    except AssertionError:
        return True
    return False


@pytest.mark.clauses("E1", "E2", "E3", "E4", "E5", "E6", "E8")
@pytest.mark.parametrize("name", list(E_VARIANTS))
def test_existence_cache_machine_catches_the_wrong_variant(
    name: str, record_property: Callable[[str, object], None]
) -> None:
    variant, clause = E_VARIANTS[name]
    machine = StorageExistenceCacheMachine.over(variant)
    assert _caught(machine), f"{name} ({clause}: {variant.__doc__}) passed the machine"
    record_property("examples_to_catch", machine.figures.examples)


@pytest.mark.clauses("P1", "P2", "P3", "P4", "P5")
@pytest.mark.parametrize("name", list(P_VARIANTS))
def test_pool_beliefs_machine_catches_the_wrong_variant(
    name: str, record_property: Callable[[str, object], None]
) -> None:
    variant, clause = P_VARIANTS[name]
    machine = PoolBeliefsMachine.over(variant)
    assert _caught(machine), f"{name} ({clause}: {variant.__doc__}) passed the machine"
    record_property("examples_to_catch", machine.figures.examples)
