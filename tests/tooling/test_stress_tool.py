"""tools/stress.py: the counting must be able to fail (JUnit parsing, the tally, the busy loop's bound)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.stress import BUSY_LOOP, RUN_ERROR, TARGETS, RunResult, Tally, main, parse_junit, pytest_command

ROOT = Path(__file__).resolve().parents[2]

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5">
<testcase classname="tests.concurrency.test_a" name="test_passes" time="0.1"/>
<testcase classname="tests.concurrency.test_a" name="test_fails[1.0]" time="0.2">
  <failure message="AssertionError: the threads never overlapped">trace</failure>
</testcase>
<testcase classname="tests.integration.test_b" name="test_errors" time="0.0">
  <error message="fixture failed">trace</error>
</testcase>
<testcase classname="tests.concurrency.test_a" name="test_skipped" time="0.0">
  <skipped message="no">why</skipped>
</testcase>
<testcase classname="tests.concurrency.test_a" name="test_with_output" time="0.0">
  <system-out>failure is a word, not an element</system-out>
</testcase>
</testsuite></testsuites>
"""


def test_a_junit_report_yields_its_failures_and_errors_and_the_number_of_tests() -> None:
    failed, cases = parse_junit(JUNIT)
    assert failed == ["tests.concurrency.test_a::test_fails[1.0]", "tests.integration.test_b::test_errors"]
    assert cases == 5


def test_the_tally_counts_failures_per_test_and_mode_and_a_reportless_failed_run_as_one() -> None:
    tally = Tally()
    failing = "tests.concurrency.test_a::test_fails[1.0]"
    tally.add(RunResult("idle", [], 5, 0, 1.0))
    tally.add(RunResult("idle", [failing], 5, 1, 2.0))
    tally.add(RunResult("busy", [failing], 5, 1, 3.0))
    tally.add(RunResult("busy", [failing], 5, 1, 5.0))
    tally.add(RunResult("busy", [], 0, 2, 4.0))  # pytest failed without a failing test: counted too
    assert tally.runs == {"idle": 2, "busy": 3}
    assert tally.failures[failing] == {"idle": 1, "busy": 2}
    assert tally.failures[RUN_ERROR] == {"busy": 1}
    assert tally.total_failures == 4
    table = tally.table(["idle", "busy"])
    assert f"  {failing}: 1 / 2" in table
    assert f"  {RUN_ERROR}: 0 / 1" in table
    assert "runs: 2 / 3 (idle / busy)" in table
    assert "busy run time: min 3.0 s, mean 4.0 s, max 5.0 s" in table


def test_a_clean_tally_says_none_and_counts_no_failure() -> None:
    tally = Tally()
    tally.add(RunResult("idle", [], 5, 0, 1.0))
    assert tally.total_failures == 0
    assert "failures (idle / busy): none" in tally.table(["idle", "busy"])


def test_the_run_writes_a_junit_report_over_the_thread_and_process_tiers(tmp_path: Path) -> None:
    command = pytest_command(tmp_path / "r.xml", ["-x"])
    assert command[:3] == [sys.executable, "-m", "pytest"]
    assert f"--junitxml={tmp_path / 'r.xml'}" in command
    assert "junit_family=legacy" in command, "record_property is an error under the default xunit2"
    assert all(target in command for target in TARGETS)
    assert "--run-slow" in command, "the slow thread tests (C1's every schedule) are stressed too"
    assert command[-1] == "-x"


def test_every_thread_and_process_test_lives_under_a_stress_target() -> None:
    """A `threads` test outside TARGETS would silently escape the stress runs."""
    marked = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("test_*.py")
        if path.resolve() != Path(__file__).resolve()
        and re.search(r"pytest\.mark\.threads|multiprocessing", path.read_text())
    }
    assert marked, "the scan found nothing: it is broken"
    outside = [p for p in sorted(marked) if not any(p == t or p.startswith(t + "/") for t in TARGETS)]
    assert outside == []


def test_the_busy_loop_stops_at_its_own_iteration_bound() -> None:
    done = subprocess.run([sys.executable, "-c", BUSY_LOOP, "3600", "1000"], timeout=120, check=False)
    assert done.returncode == 0


def test_a_run_with_a_failing_test_exits_non_zero_and_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = "tests.x::test_y"
    results = iter([RunResult("idle", [failing], 1, 1, 0.5), RunResult("idle", [], 1, 0, 0.5)])
    monkeypatch.setattr("tools.stress.run_once", lambda mode, out, index, extra: next(results))
    assert main(["--runs", "2", "--mode", "idle", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"  {failing}: 1" in out
    results = iter([RunResult("idle", [], 1, 0, 0.5)])
    assert main(["--runs", "1", "--mode", "idle", "--out", str(tmp_path)]) == 0
