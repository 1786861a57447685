"""The make-verify tooling cannot pass a contract that checked nothing."""

from __future__ import annotations

from spec.verify import ROOT, crosshair_check

VACUOUS = '''
def double(x: int) -> int:
    """M2: a contract whose precondition names a module that was never imported.

    pre: math.isfinite(x)
    post: __return__ == 2 * x
    """
    return 2 * x
'''


def test_a_contract_whose_precondition_cannot_be_met_is_reported_as_a_failure() -> None:
    """Regression: ruff removed ``import math`` (used only in docstrings) from the spec, and CrossHair
    answered 'Unable to meet precondition' for every contract, which the report counted as held."""
    probe = ROOT / ".verify" / "vacuous_contract_probe.py"
    probe.parent.mkdir(exist_ok=True)
    probe.write_text(VACUOUS)
    try:
        _, conditions = crosshair_check(probe, 1.0)
    finally:
        probe.unlink()
    assert conditions, "CrossHair reported no condition at all"
    assert all(c.verdict == "error" and c.message.startswith("vacuous contract") for c in conditions)
    assert conditions[0].clauses == ["M2"]
