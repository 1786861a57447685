"""The conformance records are the same whether pytest runs in one process or in xdist workers.

``make verify`` runs the suite with ``-n 2`` and builds the clause report from these records, so a
record lost or changed in transit (clauses, outcome, figures) would silently change the report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spec.conformance import pytest_plugin as conformance_plugin
from tests.conftest import RunPytest

SAMPLE = """
import pytest

@pytest.mark.clauses("M2", "M4")
def test_passes(record_property):
    record_property("examples", 7)
    record_property("steps", 40)

@pytest.mark.clauses("E6")
def test_fails():
    assert False

@pytest.mark.clauses("F8")
def test_skips():
    pytest.skip("no second user")

def test_untagged():
    pass

@pytest.mark.clauses("C1")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n, record_property):
    record_property("n", n)
"""


MARKERS = "[pytest]\nmarkers =\n    clauses(*ids): clause IDs\n"


def _records(run_pytest: RunPytest, tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    out = tmp_path / f"records{len(extra)}.json"
    proc = run_pytest(
        tmp_path / "test_sample.py",
        "-p",
        conformance_plugin.__name__,
        f"--conformance-json={out}",
        *extra,
        ini=MARKERS,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # exactly one test fails
    records: list[dict[str, Any]] = json.loads(out.read_text())
    for record in records:
        record.pop("seconds", None)
    return records


@pytest.mark.verify_tier
def test_records_from_xdist_workers_equal_those_of_one_process(tmp_path: Path, run_pytest: RunPytest) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    single = _records(run_pytest, tmp_path, "-p", "no:xdist")
    workers = _records(run_pytest, tmp_path, "-n", "2")
    assert workers == single
    by_name = {r["nodeid"].rpartition("::")[2]: r for r in single}
    assert by_name["test_passes"] == {
        "nodeid": by_name["test_passes"]["nodeid"],
        "clauses": ["M2", "M4"],
        "outcome": "passed",
        "figures": {"examples": 7, "steps": 40},
    }
    assert by_name["test_fails"]["outcome"] == "failed"
    assert by_name["test_skips"]["outcome"] == "skipped"
    assert by_name["test_untagged"]["clauses"] == []
    assert [by_name[f"test_param[{n}]"]["figures"] for n in (1, 2, 3)] == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_an_unknown_clause_id_stops_the_run_before_any_test(tmp_path: Path, run_pytest: RunPytest) -> None:
    """A marker naming a clause docs/SEMANTICS.md lacks (a typo) is a usage error, never a silent tag."""
    (tmp_path / "test_typo.py").write_text(
        'import pytest\n\n@pytest.mark.clauses("M2", "E9")\ndef test_typo():\n    pass\n'
    )
    proc = run_pytest(tmp_path / "test_typo.py", "-p", conformance_plugin.__name__, ini=MARKERS)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert "test_typo.py::test_typo: unknown clause IDs ['E9']" in proc.stdout + proc.stderr
