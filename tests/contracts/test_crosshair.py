"""CrossHair over the PEP 316 contracts, one test per function, tagged with its docstring's clauses.

Every function of the specs (and of ``hicache/_validate.py``) with a ``post:`` line is checked alone by
``crosshair check`` (``tests/contracts/crosshair_runner.py``: a vacuous contract, a crash or a run that
reported nothing fails); each test records how many contracts it checked (``contracts``) and how many
CrossHair proved over all paths (``proved``), which the conformance report adds up.  Every broken
variant of ``spec/variants/crosshair`` must be refuted at least where its golden file says: the check
can fail.  Real CrossHair with a budget of CPU seconds: ``make verify`` only (``verify_tier``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.contracts import crosshair_runner as runner

FUNCTIONS = runner.contract_functions()
VARIANTS = runner.variants()


def _clauses_of(variant: Path) -> tuple[str, ...]:
    return tuple(sorted({c for fn in runner.contract_functions([variant]) for c in fn.clauses}))


@pytest.mark.verify_tier
@pytest.mark.parametrize(
    "fn", [pytest.param(fn, id=fn.id, marks=pytest.mark.clauses(*fn.clauses)) for fn in FUNCTIONS]
)
def test_crosshair_finds_no_counterexample_to_a_contract(
    fn: runner.ContractFunction, record_property: Callable[[str, object], None]
) -> None:
    verdict = runner.check(fn)
    record_property("contracts", len(verdict.conditions))
    record_property(
        "proved", sum(c.verdict == "info" and "Confirmed" in c.message for c in verdict.conditions)
    )
    assert verdict.conditions, verdict.output
    assert not verdict.failed, (
        "\n".join(f"{c.name}: {c.message}" for c in verdict.failed) + "\n" + verdict.output
    )


@pytest.mark.verify_tier
@pytest.mark.parametrize(
    "variant", [pytest.param(p, id=p.stem, marks=pytest.mark.clauses(*_clauses_of(p))) for p in VARIANTS]
)
def test_crosshair_refutes_each_broken_variant(
    variant: Path, record_property: Callable[[str, object], None]
) -> None:
    caught = runner.catch(variant)
    record_property("refuted", len(caught.refuted))
    assert caught.ok, caught.detail()
