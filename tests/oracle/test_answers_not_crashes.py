"""O5 and the clock half of O4: what the oracle answers for targets it cannot run as they are.

* A constructor that refuses an argument the machine picks is a FAIL of the clause that promises the
  argument works (E1 for capacity 0), with the constructor call as its counterexample: exit 1, and no
  traceback.  (The other choice, leaving the group out, would hide the refusal from the user; a group
  they do not want checked is theirs to leave out with ``--leave-out``.)
* A method that cannot take the component's call (its signature does not bind) is a usage error: exit
  2, naming the method, its signature and the call the component makes.
* Time: the clock the target reads counts its reads.  A clock bound at import as a default argument is
  refused before the run; a target that never read the oracle's clock over a run is refused after it;
  ``from time import monotonic`` is patched, and its reads are counted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from spec.oracle import check
from spec.oracle.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
TARGETS = "tests.oracle._o5_targets"
SMALL = ["--max-examples", "100", "--steps", "15"]


@pytest.mark.clauses("O5", "E1")
def test_a_constructor_refusing_capacity_0_fails_e1_without_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "spec.oracle", "existence-cache", f"{TARGETS}:RefusesZero", *SMALL],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "breaks: E1" in done.stdout
    assert "cache = target(0)" in done.stdout
    assert "def test_the_constructor_takes_what_E1_allows" in done.stdout


@pytest.mark.clauses("O5")
def test_a_method_with_another_signature_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metadata-cache", f"{TARGETS}:ContainsTakesTwo", *SMALL]) == 2
    err = capsys.readouterr().err
    assert "contains(key, default) cannot be called" in err
    assert "as the component calls it, contains(key)" in err


@pytest.mark.clauses("O4", "O5")
@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("TimerBoundAtImport", "TimerBoundAtImport.__init__(timer=time.monotonic) binds the real clock"),
        ("NowBoundAtImport", "NowBoundAtImport.__init__(now=time.monotonic) binds the real clock"),
        ("NowBoundAtImport", """--adapter '{"arguments": {"__init__": {"clock": "now"}}}'"""),
        ("ClockInAClassAttribute", "the target never read the clock the oracle controls"),
    ],
)
def test_a_clock_the_oracle_cannot_control_is_refused(
    target: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["metadata-cache", f"{TARGETS}:{target}", *SMALL]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.clauses("O4", "M2", "M3", "M4")
def test_a_clock_imported_by_name_is_patched_and_its_reads_counted() -> None:
    result = check("metadata-cache", f"{TARGETS}:NamedMonotonic", max_examples=60, steps=15)
    assert result.passed, result.summary()
    assert result.time_control.startswith(
        "patched: the names monotonic, time in module tests.oracle._o5_targets"
    )
    assert result.figures["clock_reads"] > 0


@pytest.mark.clauses("O4")
def test_an_injected_clock_counts_the_targets_reads_too() -> None:
    """The adapter maps the oracle's clock onto ``timer=``: injected, and read."""
    adapter = {"arguments": {"__init__": {"clock": "timer"}}}
    result = check(
        "metadata-cache", f"{TARGETS}:TimerBoundAtImport", adapter=adapter, max_examples=60, steps=15
    )
    assert result.passed, result.summary()
    assert result.time_control == "injected: the fake clock is passed as timer="
    assert result.figures["clock_reads"] > 0


@pytest.mark.clauses("O4", "M2")
def test_the_adapter_the_bound_clock_error_suggests_is_one_that_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metadata-cache", f"{TARGETS}:NowBoundAtImport", *SMALL]) == 2
    suggested = capsys.readouterr().err.rsplit("--adapter ", 1)[1].strip().strip("'")
    assert main(["metadata-cache", f"{TARGETS}:NowBoundAtImport", *SMALL, "--adapter", suggested]) == 0
    assert "time: injected: the fake clock is passed as now=" in capsys.readouterr().out
