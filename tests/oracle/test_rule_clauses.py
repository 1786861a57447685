"""Every rule of a machine that acts on a world beside the target names its clause (issue 12).

A counterexample of a file component is not replayed call by call; the report attributes it through
``Component.rule_clauses`` (machine rule -> clause), so a rule missing there (``another_user_plants_a_node``
was, for S3) leaves its steps unattributed.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from spec.clauses import clause_ids
from spec.oracle._components import COMPONENTS, Component

WORLD_COMPONENTS = [c for c in COMPONENTS.values() if not c.replayable]
RULE_MARKER = "hypothesis_stateful_rule"  # what Hypothesis's @rule sets on the function it wraps


@pytest.mark.clauses("S3", "V5", "V6")
@pytest.mark.parametrize("component", WORLD_COMPONENTS, ids=[c.name for c in WORLD_COMPONENTS])
def test_every_machine_rule_of_a_file_component_is_attributed_to_a_known_clause(component: Component) -> None:
    module = importlib.import_module(component.machine_module)
    machine = getattr(module, component.machine_function)(object)
    rules = {name for name, f in inspect.getmembers(machine) if getattr(f, RULE_MARKER, None) is not None}
    attributed = component.rule_clauses
    assert rules, "no rules found: the marker Hypothesis sets has changed"
    assert sorted(rules - attributed.keys()) == []
    assert sorted(attributed.keys() - rules) == []  # no stale names either
    assert set(attributed.values()) <= clause_ids()
