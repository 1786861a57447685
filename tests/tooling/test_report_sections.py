"""The verify report carries the model-check table, the linearizability runs and the mutation score."""

from __future__ import annotations

from typing import Any

import pytest

from spec.conformance.report import render_report

SUMMARY: dict[str, Any] = {
    "component": "metadata_cache",
    "clauses": ["M2", "M3"],
    "depth_bound": 10,
    "configurations": 24,
    "states": 1854,
    "transitions": 29052,
    "depth": 8,
    "complete": True,
    "seconds": 2.2,
    "verdict": "PASS",
}


def _render(**extras: Any) -> tuple[str, bool]:
    return render_report([], [], 1.0, **extras)


@pytest.mark.clauses("M2")
def test_the_report_prints_the_model_check_table_and_counts_it_as_clause_evidence() -> None:
    text, ok = _render(modelcheck=[SUMMARY], linearizability=[], mutation=None)
    assert "metadata_cache        24    8/10 fix      1854        29052" in text
    assert "M2  PASS" in text and "model check metadata_cache PASS [1854 states" in text
    assert "C1  UNCHECKED" in text, "a clause no check names stays unchecked"
    assert "not recorded yet" in text
    assert ok


def test_a_failing_model_check_fails_its_clauses_and_the_verdict() -> None:
    text, ok = _render(modelcheck=[{**SUMMARY, "verdict": "FAIL"}])
    assert "M3  FAIL" in text
    assert not ok


def test_the_report_shows_linearizability_runs_and_the_last_mutation_score() -> None:
    runs = [{"subject": "MetadataCache", "passed": True, "summary": "100 histories"}]
    mutation = {"killed": 96, "total": 100, "paths": ["hicache/metadata_cache.py"], "tool": "mutmut"}
    text, _ = _render(linearizability=runs, mutation=mutation)
    assert "PASS  MetadataCache: 100 histories" in text
    assert "96/100 killed (96.0%) over hicache/metadata_cache.py with mutmut" in text


def _record(nodeid: str, outcome: str = "passed") -> dict[str, Any]:
    return {"nodeid": nodeid, "outcome": outcome, "clauses": ["F3"], "figures": {}}


@pytest.mark.clauses("F3")
def test_each_clause_names_its_checks_failed_first_then_machines_before_unit_tests() -> None:
    records = [
        _record("tests/unit/test_file_store.py::test_set_then_get"),
        _record("tests/unit/test_file_store.py::test_set_then_get"),
        _record("tests/stateful/test_file_store_machine.py::test_machine[cap]"),
        _record("tests/stateful/test_file_store_machine.py::test_machine[no cap]"),
        _record("tests/unit/test_file_store_messages.py::test_refused_write_logs", "failed"),
        _record("tests/integration/test_file_store_processes.py::test_two_processes"),
        _record("tests/oracle/test_catalogue.py::test_caught"),
    ]
    text, ok = render_report(records, [], 1.0)
    block = text.split("  F3  ", 1)[1].split("\n  F4  ", 1)[0]
    named = [line.strip() for line in block.splitlines() if line.strip().startswith(("checks:", "..."))]
    assert named == [
        "checks: test_file_store_messages::test_refused_write_logs",
        "checks: test_file_store_machine::test_machine",
        "checks: test_file_store_processes::test_two_processes",
        "... and 2 more tests",
    ]
    assert not ok


@pytest.mark.clauses("M2", "M4")
def test_the_contracts_the_crosshair_tests_record_are_counted_and_a_refuted_one_fails_its_clause() -> None:
    """CrossHair runs as tests (tests/contracts/test_crosshair.py): the report reads its contract count
    and its verdicts from the same records as every other test's."""
    records = [
        {
            "nodeid": "tests/contracts/test_crosshair.py::test_contracts[spec.models.metadata_cache.is_live]",
            "outcome": "passed",
            "clauses": ["M2"],
            "figures": {"contracts": 3, "proved": 2},
        },
        {
            "nodeid": (
                "tests/contracts/test_crosshair.py::test_contracts[spec.models.metadata_cache.contains]"
            ),
            "outcome": "failed",
            "clauses": ["M4"],
            "figures": {"contracts": 2, "proved": 0},
        },
    ]
    text, ok = render_report(records, [], 1.0)
    assert "; 2 tests; 5 contracts;" in text
    m2 = text.split("  M2  ", 1)[1].split("\n  M3  ", 1)[0]
    assert m2.startswith("PASS") and "contracts 1/1 tests [contracts 3] [proved 2]" in m2
    assert "M4  FAIL" in text
    assert not ok
