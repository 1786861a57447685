"""Budgets that find bugs (issue 11 item 6): the oracle's default budget, as a user runs it, catches every
catalogued mistake without the target's ``snapshot()``, and names an E4 mistake E4 (without a snapshot
the other mistakes are named for the query they show in).

``test_catalogue.py`` checks the same variants for ``make test``, on a small budget and with the
snapshot a variant has.  Here each runs as ``hicache-oracle COMPONENT TARGET`` would: seed 0, the
default examples and steps, and ``snapshot`` left out (``--adapter '{"omit": ["snapshot"]}'``) where
the component allows it, so that the machine's own steps must bring every defect to the surface.  It
stops at the first failure (``every_clause=False``): the other clauses are ``test_every_failing_clause``'s.
There is no exception: the runs draw the same examples whatever the process has loaded
(``spec.machines._base.independent_of_loaded_modules``), so a variant caught here alone is caught in a
``make verify`` worker too.  Twenty-odd seconds at most per component on two cores, so the verify tier
(``make verify``).
"""

from __future__ import annotations

import pytest

from spec.oracle import Adapter, check
from spec.oracle._components import COMPONENTS
from tests.oracle.catalogue import ALSO_NAMED, WRONG, Variant, named_first

pytestmark = pytest.mark.verify_tier


def _without_snapshot(variant: Variant) -> Adapter | None:
    optional = COMPONENTS[variant.component].optional_methods
    if "snapshot" in optional and hasattr(variant.target, "snapshot"):
        return Adapter(omit=frozenset({"snapshot"}))
    return None


@pytest.mark.parametrize(
    "variant",
    [pytest.param(v, id=f"{v.component}:{v.name}", marks=pytest.mark.clauses(v.clause, "O1")) for v in WRONG],
)
def test_the_default_budget_catches_every_catalogued_mistake_without_a_snapshot(variant: Variant) -> None:
    adapter = _without_snapshot(variant)
    declare = dict(variant.declare)  # O3: a variant catalogued under a declared choice is checked under it
    result = check(
        variant.component,
        variant.target,
        adapter=adapter,
        every_clause=False,
        declare=declare,
        leave_out=variant.leave_out,
    )
    assert result.verdict == "FAIL", f"{variant.name} slipped through: {result.summary()}"
    assert 1 <= result.calls <= 8, result.summary()
    if adapter is None:  # with the snapshot compared after every step, the step that broke it is named
        breaks = {variant.clause} | ALSO_NAMED.get(variant.name, frozenset())
        assert named_first(result.failures[0]) & breaks, result.summary()  # among an inferred blame's
    # Without one, the clause named is the query where the defect shows (len(): E7, contains: E3, ...),
    # except that an E4 defect shows through contains_all and the eviction probe after it: E4.
    if variant.clause == "E4":
        assert result.clauses[:1] == ["E4"], result.summary()
