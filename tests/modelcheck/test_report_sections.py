"""The verify report carries the model-check table, the linearizability runs and the mutation score."""

from __future__ import annotations

from typing import Any

import pytest

from spec.report import render_report

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
    "note": "",
}


def _render(**extras: Any) -> tuple[str, bool]:
    return render_report([], [], [], 1.0, **extras)


@pytest.mark.clauses("M2")
def test_the_report_prints_the_model_check_table_and_counts_it_as_clause_evidence() -> None:
    na = {**SUMMARY, "component": "file_store", "verdict": "N/A", "note": "not available", "clauses": ["C1"]}
    text, ok = _render(modelcheck=[SUMMARY, na], linearizability=[], mutation=None)
    assert "metadata_cache        24    8/10 fix      1854        29052" in text
    assert "N/A (not available)" in text
    assert "M2  PASS" in text and "model check metadata_cache PASS [1854 states" in text
    assert "C1  UNCHECKED" in text, "a component that has not landed checks nothing"
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
