"""The report as a newcomer automates it (issue 23): the README's JSON example has exactly the keys a run
prints, Python and JSON use the same names, ``left_out`` holds clause groups only, ``fs_control`` is
null without a filesystem, ``--strict`` fails a run that left groups unchecked, and a counterexample
reads alone (the clock's start, the construction, the clock moves, an exception's message)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from spec.models.metadata_cache import refuse_bad_key
from spec.oracle import check
from spec.oracle.__main__ import main
from spec.oracle._adapter import KEYS
from spec.oracle._components import COMPONENTS
from spec.oracle._result import Failure, OracleResult
from spec.variants.existence_cache import ContainsDoesNotTouch
from spec.variants.metadata_cache import PlainHardTTLSet

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--max-examples", "300", "--steps", "15"]
VARIANTS = "spec.variants.metadata_cache"


def readme_shape() -> dict[str, Any]:
    text = (ROOT / "README.md").read_text()
    found = re.search(r"<!-- oracle json shape -->\s*```json\n(?P<body>.*?)\n```", text, re.S)
    assert found, "the README shows no JSON shape under <!-- oracle json shape -->"
    shape: dict[str, Any] = json.loads(found["body"])
    return shape


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main([*argv, "--json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return status, report


@pytest.mark.clauses("M2")
def test_the_readme_json_shape_has_exactly_the_keys_a_run_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shape = readme_shape()
    status, report = 1, json.loads(json.dumps(_boundary_exclusive().as_dict()))  # what --json prints
    assert status == 1
    assert set(shape) == set(report)
    [example] = shape["failures"]
    assert set(example) == set(report["failures"][0]) == {f for f in Failure.__dataclass_fields__}
    assert set(shape["figures"]) == set(report["figures"])
    assert set(shape["adapter"]) == set(report["adapter"]) == set(KEYS)
    for key, value in shape.items():  # the types too: a bool stays a bool, null stays null
        assert type(value) is type(report[key]) or value is None, (key, value, report[key])


TRACE = ROOT / "docs" / "traces" / "metadata-cache-race.jsonl"


@pytest.mark.clauses("O6", "O7", "M7")
@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["metadata-cache", "--trace", str(TRACE)], id="trace"),
        pytest.param(
            ["metadata-cache", f"{VARIANTS}:UnlockedCheckThenAdd", "--threads", "2", "--histories", "40"],
            id="threads",
        ),
    ],
)
def test_the_trace_and_threads_reports_have_the_readme_shape_too(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The three modes print one shape (issue 21): the same keys at the top and in a failure, the same
    adapter keys, and the same types (a trace's adapter is the empty one, its ``fs_control`` null)."""
    shape = readme_shape()
    status, report = _run_json(argv, capsys)
    assert status == 1, report["verdict"]
    assert set(shape) == set(report)
    assert set(shape["failures"][0]) == set(report["failures"][0])
    assert set(shape["adapter"]) == set(report["adapter"]) == set(KEYS)
    for key, value in shape.items():
        assert type(value) is type(report[key]) or value is None, (key, value, report[key])
    component = COMPONENTS["metadata-cache"]
    assert set(report["left_out"]) <= {*component.groups, *component.clauses}, report["left_out"]
    assert all(failure["clauses"] for failure in report["failures"])  # O10: in every mode


@pytest.mark.clauses("O7", "O8", "M6", "M8")
def test_a_trace_report_fills_missing_not_checked_and_strict_gaps_as_the_other_modes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unbounded trace with no remove, clear or len and one stats call: M6 and M5 are missing (the
    calls and the setting the trace lacks, as a target's missing methods), M8 is not checked and not
    counted (no trace judges counters), and ``--strict`` exits 1 on M5 and M6 only."""
    header = {"format": "hicache-trace/1", "component": "metadata-cache", "config": {"ttl_seconds": -1}}
    calls = [
        {"thread": 1, "op": "add", "args": ["k"], "invoke": 1, "return": 2, "result": None},
        {"thread": 2, "op": "stats", "args": [], "invoke": 1, "return": 2, "result": {"hits": 0}},
        {"thread": 2, "op": "contains", "args": ["k"], "invoke": 3, "return": 4, "result": True},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [header, *calls]) + "\n")
    status, report = _run_json(["metadata-cache", "--trace", str(path)], capsys)
    assert status == 0 and report["verdict"] == "PASS", report
    assert {"remove", "clear", "len", "config max_entries", "stats"} <= set(report["missing"])
    assert set(report["left_out"]) == {"M5", "M6", "M9"}, report["left_out"]
    assert report["passed_clauses"] == ["M2", "M3", "M4"], report["passed_clauses"]
    # B1: no call in this trace raised, so no bad input was judged
    assert set(report["not_checked"]) == {"M7", "M8", "B1"}, report["not_checked"]
    assert set(report["strict_gaps"]) == {"M5", "M6", "M7", "M9"}, report["strict_gaps"]
    assert main(["metadata-cache", "--trace", str(path), "--strict"]) == 1
    [line] = [line for line in capsys.readouterr().out.splitlines() if "STRICT" in line]
    assert "M5 (no remove, clear, len)" in line and "M8" not in line, line
    header["leave_out"] = ["M5", "M6", "M7", "M9"]  # asked for: no gap
    path.write_text("\n".join(json.dumps(line) for line in [header, *calls]) + "\n")
    assert main(["metadata-cache", "--trace", str(path), "--strict"]) == 0, capsys.readouterr().out


@functools.cache
def _boundary_exclusive() -> OracleResult:
    """One run of the README's failing variant, shared by the tests that read its report."""
    return check("metadata-cache", f"{VARIANTS}:BoundaryExclusive", max_examples=300, steps=15)


@pytest.mark.clauses("M2")
def test_python_and_json_use_the_same_names() -> None:
    result = _boundary_exclusive()
    report = result.as_dict()
    assert report["passed"] is result.passed is False
    assert report["passed_clauses"] == result.passed_clauses
    for name, value in report.items():
        if name != "failures":
            assert getattr(result, name) == value, name
    failure = result.failures[0]
    assert failure.clauses == failure["clauses"] == report["failures"][0]["clauses"]
    assert failure.as_dict() == report["failures"][0]
    assert json.loads(json.dumps(report)) == report  # plain JSON all the way down


@pytest.mark.clauses("M2", "M3", "M4")
def test_left_out_holds_clause_groups_and_missing_methods_have_their_own_key() -> None:
    result = check("metadata-cache", PlainHardTTLSet, max_examples=30, steps=10)
    assert result.passed, result.summary()
    assert set(result.left_out) == {"M5", "M6", "M8", "M9"}
    assert {"max_entries", "remove", "__len__", "stats", "snapshot"} <= set(result.missing)
    assert result.fs_control is None and result.as_dict()["fs_control"] is None
    assert "missing: remove: M5 remove: no remove()" in result.summary()


@pytest.mark.clauses("M2", "M3", "M4")
def test_strict_exits_1_on_groups_unchecked_for_want_of_a_method(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = [f"{VARIANTS}:PlainHardTTLSet", "--max-examples", "30", "--steps", "10"]
    assert main(["metadata-cache", *target]) == 0
    capsys.readouterr()
    assert main(["metadata-cache", *target, "--strict"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("PASS")  # the verdict stands; strict fails on what went unchecked
    [line] = [line for line in out.splitlines() if "STRICT" in line]
    for clause in ("M5", "M6", "M8", "M9"):
        assert f"{clause} (no " in line, line
    # a target with every method passes --strict, a group left out on request included
    full = ["tests.oracle.catalogue:metadata_cache_with_counters", "--max-examples", "30", "--steps", "10"]
    status, report = _run_json(["metadata-cache", *full, "--strict", "--leave-out", "M9"], capsys)
    assert report["strict_gaps"] == {} and status == 0, report["strict_gaps"]
    assert "M7" in report["not_checked"]  # listed, but no gap --strict counts: no sequential run checks it
    assert "M9" in report["left_out"]


@pytest.mark.clauses("M2")
def test_the_text_counterexample_reads_alone() -> None:
    result = check("metadata-cache", f"{VARIANTS}:ZeroTtlNeverExpires", max_examples=300, steps=15)
    lines = result.counterexample
    assert lines[0].startswith("clock = FakeClock("), lines  # the clock's start
    assert lines[1].startswith("cache = ZeroTtlNeverExpires(0, max_entries="), lines  # with its arguments
    assert "clock=clock" in lines[1], lines
    assert any(line.startswith("clock.now = ") for line in lines), lines  # each clock move a line
    assert lines[-1].endswith("# answered True; the spec answers False"), lines
    assert result.calls == sum(line.startswith("cache.") for line in lines)


class RaisesWithAMessage(PlainHardTTLSet):
    """M4: ``contains`` of a key never added raises, with a message of its own."""

    def contains(self, key: Any) -> bool:
        refuse_bad_key(key)  # B1, as its base
        if key not in self._births:
            raise KeyError(f"never saw {key!r}")
        return bool(super().contains(key))


@pytest.mark.clauses("M4")
def test_an_exception_in_the_counterexample_shows_its_message() -> None:
    result = check("metadata-cache", RaisesWithAMessage, max_examples=100, steps=10)
    assert result.verdict == "FAIL", result.summary()
    assert 'raised KeyError: "never saw' in result.message, result.message
    assert 'raised KeyError: "never saw' in result.counterexample[-1], result.counterexample


@pytest.mark.clauses("E3", "E4", "O11")
@pytest.mark.slow("an answers-only search: found after about 260 examples of 25 steps, 4 s")
def test_without_a_snapshot_the_rule_that_made_the_state_is_blamed_then_the_answering_operation() -> None:
    adapter = {"omit": ["snapshot"]}
    result = check("existence-cache", ContainsDoesNotTouch, adapter=adapter, max_examples=500, steps=25)
    assert result.verdict == "FAIL", result.summary()
    first = result.failures[0]
    diverging = first.counterexample[-1].split("(", 1)[0].removeprefix("cache.")
    own = {"contains": "E3", "contains_all": "E4", "covers_all": "E5", "__len__": "E7"}
    # O11: E3 first (the contains that did not refresh made the state), the answering operation's next
    assert first.inferred and first.clauses[0] == "E3" and first.provenance == ["E3"], result.summary()
    assert own.get(diverging, "E3") in first.clauses, result.summary()
    assert "E3" not in result.passed_clauses, result.summary()  # not claimed passed: it may be the one
    assert "inferred without snapshot()" in result.summary()
