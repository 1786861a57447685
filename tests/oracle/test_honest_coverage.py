"""O8, honest coverage: a report lists a clause as passed only when its checks ran to their budget.

A sequential run does not check M7 (C5 for a file store); a clause whose rules were set aside after
another clause failed is not checked, never passed; a run that stopped early says what did not get its
budget and the examples it did get.  O2 with V5's rules shared: a failure of V5 sets its divergences
aside, not the rules V6 and S7 need, so that one run finds all three of an evictor that breaks them.
"""

from __future__ import annotations

import json

import pytest

from hicache.metadata_cache import MetadataCache
from spec.conformance.clauses import CLAUSE_ID
from spec.oracle import check
from spec.oracle.__main__ import main
from spec.oracle._components import COMPONENTS

TARGETS = "tests.oracle._coverage_targets"
THREADS = "(sequential run; use --threads)"


@pytest.mark.clauses("O8", "M7")
def test_a_sequential_run_lists_m7_as_not_checked_never_as_passed(capsys: pytest.CaptureFixture[str]) -> None:
    result = check("metadata-cache", MetadataCache, max_examples=10, steps=10)
    assert result.passed, result.summary()
    assert result.not_checked == {"M7": THREADS}
    assert "M7" not in result.passed_clauses
    assert f"  not checked {THREADS}: M7" in result.summary().splitlines()
    argv = ["metadata-cache", "hicache.metadata_cache:MetadataCache", "--max-examples", "5", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["not_checked"] == {"M7": THREADS}, report
    assert "M7" not in report["passed_clauses"]


@pytest.mark.clauses("O8", "C5")
def test_a_sequential_run_of_a_file_store_lists_c5_as_not_checked() -> None:
    result = check("file-store", "hicache.file_store:HiCacheFile", max_examples=3, steps=5)
    assert result.passed, result.summary()
    assert result.not_checked == {"C5": THREADS}
    assert f"  not checked {THREADS}: C5" in result.summary()


@pytest.mark.slow("an oracle search of 300 examples over a file evictor, 7-17 s")
@pytest.mark.clauses("O8", "O2", "V5", "V6")
def test_one_run_finds_v5_and_v6_of_an_evictor_that_calls_back_late_and_stops_at_unremovable_files() -> None:
    # V5's rules (vanished and unremovable files) are what V6's checks need: after V5 fails its divergences
    # are set aside, not its rules.  The victim that stops the pass is V5's, never V3's; and what follows
    # a V5 divergence in an example (a total that differs) is V5's too, never C3's.
    result = check("file-evictor", f"{TARGETS}:CallsBackAfterRemovalAndStops", max_examples=300, steps=15)
    first = [failure["clauses"][0] for failure in result.failures]
    assert {"V5", "V6"} <= set(first) <= {"V5", "V6", "S7"}, result.summary()
    assert not {"V5", "V6"} & set(result.passed_clauses), result.summary()
    v5 = next(failure for failure in result.failures if failure["clauses"][0] == "V5")
    assert any("unremovable" in step for step in v5["counterexample"]), result.summary()


@pytest.mark.slow("an oracle search of 200 examples over a file evictor, 6-11 s")
@pytest.mark.clauses("O8", "V5", "S7")
def test_a_clause_whose_rules_were_set_aside_after_a_failure_is_not_checked_never_passed() -> None:
    # S7's checks need V5's unremovable files, in examples that V5's divergences end once V5 has failed:
    # S7 is "not checked after V5 was set aside".
    target = "spec.variants.file_evictor:StopsAtUnremovable"
    result = check("file-evictor", target, max_examples=200, steps=15)
    assert [failure["clauses"][0] for failure in result.failures] == ["V5"], result.summary()
    assert result.not_checked == {"S7": "after V5 was set aside"}, result.summary()
    assert "S7" not in result.passed_clauses
    assert "  not checked after V5 was set aside: S7" in result.summary()


@pytest.mark.clauses("O8", "V5", "S7")
def test_a_clause_needing_a_group_left_out_on_request_is_not_checked() -> None:
    target = "spec.variants.file_evictor:OsEvictor"
    result = check("file-evictor", target, max_examples=20, steps=10, leave_out=["V5"])
    assert result.passed, result.summary()
    assert result.not_checked == {"S7": "while V5 is left out"}, result.summary()


@pytest.mark.clauses("O8", "M1", "O5")
def test_a_run_stopped_by_a_refused_constructor_lists_every_other_clause_as_not_checked() -> None:
    result = check("metadata-cache", f"{TARGETS}:RefusesABound", max_examples=200, steps=10)
    assert [failure["clauses"] for failure in result.failures] == [["M1"]], result.summary()
    examples = result.figures["examples"]
    assert examples < 200
    why = (
        f"(the search stopped after {examples} of 200 examples: "
        "M1 failed, and no group of its rules can be set aside to look for the others)"
    )
    clauses = COMPONENTS["metadata-cache"].clauses
    assert result.not_checked == {"M7": THREADS, **dict.fromkeys(clauses, why)}, result.summary()
    assert result.passed_clauses == []
    assert f"  not checked {why}: {', '.join(clauses)}" in result.summary()


@pytest.mark.clauses("O8", "O2", "M5")
def test_a_run_cut_at_its_first_failure_lists_the_clauses_that_did_not_get_their_budget() -> None:
    target = "tests.oracle._o5_targets:ExclusiveAndLenCountsExpired"
    result = check("metadata-cache", target, max_examples=300, steps=15, every_clause=False)
    assert len(result.failures) == 1, result.summary()
    failed = result.failures[0]["clauses"][0]
    examples = result.figures["examples"]
    reason = f"(the search stopped after {examples} of 300 examples: it stops at the first failure ({failed}"
    unchecked = {c for c, why in result.not_checked.items() if why.startswith(reason)}
    left_out = {c for why in result.left_out.values() for c in CLAUSE_ID.findall(why.split(":")[0])}
    assert unchecked, result.summary()
    broken = {*result.failures[0].clauses, *result.failures[0].consistent_with}  # an inferred blame's too
    assert unchecked == set(COMPONENTS["metadata-cache"].clauses) - broken - left_out
    assert result.passed_clauses == []
