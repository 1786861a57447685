"""O8: the oracle never hangs.  A call to the target that does not return within ``--call-timeout``
seconds is a FAIL of the clause of the rule that made it, naming the call, the calls in flight and
every thread's stack, and the JSON report is still written.  The spinning cache never returns, so a
short timeout decides nothing about speed; its spin is released at teardown, and the oracle stops the
thread it abandoned by itself."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator

import pytest

import tests.oracle._coverage_targets as targets
from spec.oracle import check
from spec.oracle.__main__ import main
from spec.oracle._timeout import CallGuard, CallTimedOut

SPINS = "tests.oracle._coverage_targets:SpinsWhenFull"
WORKER = "hicache-oracle-call"  # the name of the guard's worker threads


def _workers() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name == WORKER and thread.is_alive()}


@pytest.fixture
def new_workers() -> Iterator[Callable[[], set[threading.Thread]]]:
    """The guard worker threads started during the test and still alive (each joined first, for at most
    30 s: a thread the oracle stopped or closed ends at once)."""
    before = _workers()
    targets.RELEASE.clear()

    def alive() -> set[threading.Thread]:
        for thread in _workers() - before:
            thread.join(timeout=30)
        return _workers() - before

    try:
        yield alive
    finally:
        targets.RELEASE.set()  # no thread is left spinning, whatever the test found
        alive()


@pytest.mark.clauses("O8", "M3", "M6")
def test_an_add_that_spins_once_full_is_a_fail_of_its_rules_clause_with_the_stacks(
    new_workers: Callable[[], set[threading.Thread]],
) -> None:
    result = check("metadata-cache", SPINS, max_examples=200, steps=20, call_timeout=0.5)
    assert result.verdict == "FAIL", result.summary()
    [failure] = result.failures
    # The rule that made the call: add (M3), or fill / the bound's own rule (M6).
    assert failure["clauses"] in (["M3"], ["M6"]), result.summary()
    assert "did not return within 0.5 s (calls in flight: add(" in failure["message"], failure["message"]
    assert failure["counterexample"][0].startswith("cache = target("), failure["counterexample"]
    last = failure["counterexample"][-1]
    assert last.startswith("cache.add(") and last.endswith("# did not return"), failure["counterexample"]
    # every thread's stack: the abandoned call inside SpinsWhenFull.add, and the oracle's own thread
    assert f"thread {WORKER} (the call)" in failure["stacks"] and ", in add\n" in failure["stacks"]
    assert "thread MainThread" in failure["stacks"] and "in search_sequential" in failure["stacks"]
    text = result.summary()
    assert "  stacks:" in text and "did not return within 0.5 s" in text
    stopped = [why for why in result.not_checked.values() if why.startswith("(the search stopped after")]
    assert stopped and stopped[0].endswith(": a call did not return within 0.5 s)"), result.not_checked
    # The oracle stopped the spinning thread itself (an exception raised in it), before teardown's release,
    # and ended the run's worker.
    assert new_workers() == set() and not targets.RELEASE.is_set()


@pytest.mark.clauses("O8", "O5")
def test_the_cli_takes_call_timeout_and_still_writes_the_json_report(
    capsys: pytest.CaptureFixture[str], new_workers: Callable[[], set[threading.Thread]]
) -> None:
    budget = ["--max-examples", "200", "--steps", "20"]
    code = main(["metadata-cache", SPINS, *budget, "--call-timeout", "0.5", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["verdict"] == "FAIL", report
    assert "did not return within 0.5 s" in report["failures"][0]["message"]
    assert ", in add\n" in report["failures"][0]["stacks"]
    assert main(["metadata-cache", SPINS, "--call-timeout", "0"]) == 2
    assert "call_timeout must be > 0" in capsys.readouterr().err
    assert new_workers() == set()


@pytest.mark.clauses("O8")
def test_the_guard_carries_answers_and_exceptions_and_names_the_late_call(
    new_workers: Callable[[], set[threading.Thread]],
) -> None:
    guard = CallGuard(0.5)
    try:
        assert guard.run(lambda: 42, "answer()") == 42
        empty: dict[str, int] = {}
        with pytest.raises(KeyError, match="k"):
            guard.run(lambda: empty["k"], "lookup('k')")
        # a call the target makes back from inside a guarded call runs directly (no deadlock on itself)
        assert guard.run(lambda: guard.run(lambda: "inner", "inner()"), "outer()") == "inner"
        blocked = threading.Event()
        with pytest.raises(CallTimedOut) as late:
            guard.run(blocked.wait, "wait()")  # blocked in C: abandoned, not stopped, until set
        assert late.value.call == "wait()" and late.value.in_flight == ["wait()"]
        assert "in wait" in late.value.stacks
        blocked.set()
        assert guard.run(lambda: "after", "after()") == "after"  # a fresh worker
    finally:
        guard.close()
    with pytest.raises(ValueError, match="call_timeout must be > 0"):
        CallGuard(0)
    assert new_workers() == set()  # the one abandoned while blocked ended once woken, the last one closed
