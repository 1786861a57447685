"""O2: one run reports every failing clause, each with its own counterexample, then the clauses that
passed, then what was left out and why; ``--leave-out GROUP`` sets a group aside on purpose (O3: not
validating input, B1, is a choice some engines make)."""

from __future__ import annotations

import json

import pytest

from spec.oracle import check
from spec.oracle.__main__ import main

TARGETS = "tests.oracle._o5_targets"
SMALL = ["--max-examples", "40", "--steps", "15"]  # KeepPagesUnchecked fails in its first examples


@pytest.mark.clauses("O2", "B1", "E6")
def test_a_class_that_does_not_validate_keep_pages_fails_only_in_the_b1_group(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["existence-cache", f"{TARGETS}:KeepPagesUnchecked", *SMALL, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    keys = {"verdict", "failures", "passed", "passed_clauses", "left_out", "figures", "time_control"}
    assert keys <= set(report)
    assert report["verdict"] == "FAIL"
    assert [f["clauses"] for f in report["failures"]] == [["B1"]]
    failure = report["failures"][0]
    assert failure["calls"] == 1 and "invalidate_beyond(" in failure["counterexample"][-1]
    assert "def test_" in failure["repro"]
    assert report["passed"] is False
    assert set(report["passed_clauses"]) == {"E2", "E3", "E4", "E5", "E6", "E7", "E8", "E1"}
    assert "B1" in report["left_out"]


@pytest.mark.clauses("O2", "B1")
def test_leaving_b1_out_passes_the_class_that_does_not_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["existence-cache", f"{TARGETS}:KeepPagesUnchecked", *SMALL, "--leave-out", "B1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: ")
    assert "left out: B1: left out on request (--leave-out)" in out


@pytest.mark.clauses("O2")
def test_an_unknown_group_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["existence-cache", f"{TARGETS}:KeepPagesUnchecked", *SMALL, "--leave-out", "Z9"]) == 2
    assert "not a group of existence-cache" in capsys.readouterr().err


@pytest.mark.clauses("O2", "M2", "M5")
@pytest.mark.slow("an oracle search for every failing clause, the second found after over a hundred examples")
def test_two_mistakes_are_two_failures_each_with_its_own_counterexample() -> None:
    result = check("metadata-cache", f"{TARGETS}:ExclusiveAndLenCountsExpired", max_examples=600, steps=15)
    assert result.verdict == "FAIL"
    first = {f["clauses"][0] for f in result.failures}
    assert {"M2", "M5"} <= first, result.summary()
    for failure in result.failures:
        assert 1 <= failure["calls"] <= 4 and failure["repro"], result.summary()
    assert "M2" not in result.passed_clauses and "M5" not in result.passed_clauses


@pytest.mark.clauses("O2", "B1")
def test_a_search_sets_groups_aside_in_its_own_state_and_leaves_the_session_as_prepared() -> None:
    """The groups a search sets aside after their failure are the search's (``Found.left_out``): the
    prepared session is read-only and unchanged, so a second search over it finds the same failure,
    not a run with B1 already set aside."""
    from spec.oracle._run import prepared
    from spec.oracle._sequential import SearchBudget, search_sequential

    budget = SearchBudget(seed=0, max_examples=40, steps=15)
    with prepared("existence-cache", f"{TARGETS}:KeepPagesUnchecked") as run:
        before = dict(run.session.left_out)
        first = search_sequential(run, budget)
        assert dict(run.session.left_out) == before and "B1" not in before
        with pytest.raises(TypeError):
            run.session.left_out["B1"] = "written from outside"  # type: ignore[index]
        second = search_sequential(run, budget)
    assert (
        first.left_out == second.left_out == {"B1": "B1: set aside after its failure, to look for the others"}
    )
    assert [f.clauses for f in first.failures] == [f.clauses for f in second.failures] == [["B1"]]
