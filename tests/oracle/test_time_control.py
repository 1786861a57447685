"""Patched time control reaches every module that may read the clock for the target (issue 5).

A target that reads ``time.monotonic()`` itself is patched in the module of the
factory or class *and* in the modules of every class of the instance it builds
(its MRO): a subclass defined elsewhere than the class that reads the clock, or a
factory returning another module's class, runs on the fake clock too.  A target
with no reference to the time anywhere is a usage error, not a run on the real
clock.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import tests.oracle._time_targets as clock_readers
from spec.oracle import OracleUsageError, check
from spec.oracle.__main__ import main
from tests.oracle._time_subclass import CounterTTLSet

SUBCLASS = "tests.oracle._time_subclass"
SMALL: dict[str, Any] = {"max_examples": 40, "steps": 15}


@pytest.mark.clauses("M2", "M3", "M4")
@pytest.mark.parametrize(
    "target", [f"{SUBCLASS}:CountingSubclass", f"{SUBCLASS}:make"], ids=["subclass", "factory"]
)
def test_a_correct_target_reaching_another_modules_clock_reader_passes_on_the_fake_clock(target: str) -> None:
    result = check("metadata-cache", target, **SMALL)
    assert result.passed, result.summary()
    assert result.time_control == (
        "patched: the names time in module tests.oracle._time_targets read the fake clock"
    )
    assert vars(clock_readers)["time"] is time  # restored after the run


@pytest.mark.clauses("M2")
@pytest.mark.parametrize(
    "target",
    [f"{SUBCLASS}:CountingSubclassExclusive", f"{SUBCLASS}:make_exclusive"],
    ids=["subclass", "factory"],
)
def test_a_wrong_target_reached_that_way_is_still_caught_with_a_runnable_reproduction(target: str) -> None:
    result = check("metadata-cache", target, max_examples=300, steps=15, every_clause=False)
    assert result.verdict == "FAIL" and result.clauses[0] == "M2", result.summary()
    assert result.calls <= 8
    assert vars(clock_readers)["time"] is time
    # The reproduction patches the same modules: it fails as it is and passes against a correct target.
    for correct, fails in ((target, True), (f"{SUBCLASS}:make", False)):
        namespace: dict[str, Any] = {"__name__": "oracle_repro"}
        exec(compile(result.repro, "test_repro.py", "exec"), namespace)
        namespace["TARGET"] = correct
        test = next(v for k, v in namespace.items() if k.startswith("test_"))
        if fails:
            with pytest.raises(AssertionError, match="M2"):
                test()
        else:
            test()
        assert vars(clock_readers)["time"] is time


@pytest.mark.clauses("M4")
def test_a_target_with_no_clock_parameter_and_no_time_reference_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(OracleUsageError, match=r"cannot control the time of the target.*clock parameter"):
        check("metadata-cache", CounterTTLSet, **SMALL)
    assert main(["metadata-cache", f"{SUBCLASS}:CounterTTLSet"]) == 2
    err = capsys.readouterr().err
    assert "tests.oracle._time_subclass" in err and "--adapter" in err
