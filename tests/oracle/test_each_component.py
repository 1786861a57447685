"""``make test``'s share of the oracle (issue 22, decision 1): for each of the five components, one run
that must PASS and one that must FAIL, at a small budget, so that a broken oracle turns ``make test`` red.

The oracle's searches over the whole catalogue, its reproductions, its control of the filesystem, the
declared choices, the engine's evictor and the default budget are the verify tier's (``slow``:
``make verify``).  Each run here takes about a second of CPU or less.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from spec.oracle import check
from tests.oracle.catalogue import ALSO_NAMED, CORRECT, WRONG, Variant, named_first

STEPS = 15
PASS_EXAMPLES = 30
FIND_EXAMPLES = 300  # a cap: each of these is found in under 10 examples


def _variant(variants: list[Variant], component: str, name: str) -> Variant:
    [found] = [v for v in variants if v.component == component and v.name == name]
    return found


# component -> (a catalogued mistake found within a few examples, the production class)
EACH = {
    "metadata-cache": ("EvictNewest", "production"),
    "existence-cache": ("TrimmedInLen", "production"),
    "pool-beliefs": ("InflightAsASet", "production registry"),
    "file-evictor": ("VanishedNotRefunded", "production"),
    "file-store": ("store: namespace taken as a plain suffix", "production"),
}
FAILING = [_variant(WRONG, component, wrong) for component, (wrong, _) in EACH.items()]
PASSING = [_variant(CORRECT, component, correct) for component, (_, correct) in EACH.items()]


def _params(variants: list[Variant]) -> list[object]:
    return [
        pytest.param(v, id=f"{v.component}:{v.name}", marks=pytest.mark.clauses(v.clause)) for v in variants
    ]


@pytest.mark.parametrize("variant", _params(FAILING))
def test_a_catalogued_mistake_of_each_component_fails_with_its_clause_and_a_reproduction(
    variant: Variant, record_property: Callable[[str, object], None]
) -> None:
    result = check(
        variant.component,
        variant.target,
        max_examples=FIND_EXAMPLES,
        steps=STEPS,
        every_clause=False,
        leave_out=variant.leave_out,
    )
    record_property("examples", result.figures["examples"])
    assert result.verdict == "FAIL", f"{variant.name} slipped through: {result.summary()}"
    assert 1 <= result.calls <= 8, result.summary()
    breaks = {variant.clause} | ALSO_NAMED.get(variant.name, frozenset())
    assert named_first(result.failures[0]) & breaks, result.summary()  # among an inferred blame's
    assert result.counterexample and result.repro, "a failure comes with its steps and a reproduction file"


@pytest.mark.parametrize("variant", _params(PASSING))
def test_the_production_class_of_each_component_passes_a_small_budget(
    variant: Variant, record_property: Callable[[str, object], None]
) -> None:
    result = check(
        variant.component,
        variant.target,
        max_examples=PASS_EXAMPLES,
        steps=STEPS,
        leave_out=variant.leave_out,
    )
    for key, value in result.figures.items():
        record_property(key, value)
    assert result.passed, result.summary()
    assert result.figures["examples"] == PASS_EXAMPLES
    assert not result.failures and not result.repro


def test_the_table_names_every_component_of_the_oracle() -> None:
    from spec.oracle._components import COMPONENTS

    assert sorted(EACH) == sorted(COMPONENTS)
