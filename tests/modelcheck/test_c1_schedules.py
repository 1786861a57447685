"""The deterministic scheduler enumerates interleavings exactly, and C1 holds under every one of them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hicache.file_store import HiCacheFile
from spec.modelcheck.c1_race import SCENARIOS, Scenario, accounting_scenario, check_scenario
from spec.modelcheck.interleavings import ExploredLock, ExploringScheduler, explore_schedules
from spec.variants.file_store import NoC1Guard

pytestmark = pytest.mark.threads

# Every schedule of production under the scenarios whose exploration takes seconds (the scheduler switches
# real threads at each marked point): the verify tier's, which runs them besides its model check's own
# c1_race step; make stress runs them every time (--run-slow).  make test keeps the others.
EVERY_SCHEDULE = pytest.mark.slow("every schedule of the real store in a scenario with 950 to 2,000 of them")
HEAVY = {"set vs evict", "get vs evict"}


def _segments(scheduler: ExploringScheduler) -> tuple[tuple[str, ...], None]:
    log: list[str] = []

    def body(i: int) -> Callable[[], None]:
        def run() -> None:
            log.append(f"{i}a")
            scheduler.point("p1")
            log.append(f"{i}b")
            scheduler.point("p2")
            log.append(f"{i}c")

        return run

    assert scheduler.run([body(0), body(1)]) == []
    return tuple(log), None


@pytest.mark.clauses("C1")
def test_two_threads_with_two_marked_points_each_have_exactly_twenty_schedules() -> None:
    """Hand count: each thread runs in 3 segments split by its 2 marked points, and a schedule is an
    interleaving of the two segment sequences: C(6, 3) = 20, each with its own order of the log."""
    outcome = explore_schedules(_segments)
    assert outcome.schedules == 20
    assert len(outcome.outcomes) == 20


@pytest.mark.clauses("C1")
def test_a_scheduled_lock_excludes_the_other_thread_at_every_marked_point_inside_it() -> None:
    def run_once(scheduler: ExploringScheduler) -> tuple[tuple[str, ...], None]:
        log: list[str] = []
        lock = ExploredLock(scheduler)

        def body(i: int) -> Callable[[], None]:
            def run() -> None:
                with lock:
                    log.append(f"{i}a")
                    scheduler.point("inside")
                    log.append(f"{i}b")

            return run

        scheduler.run([body(0), body(1)])
        return tuple(log), None

    outcome = explore_schedules(run_once)
    assert outcome.outcomes == {("0a", "0b", "1a", "1b"), ("1a", "1b", "0a", "0b")}
    assert outcome.schedules > 2, "the threads were switched inside the lock, and the other one blocked"


@pytest.mark.clauses("C1", "F6", "V6")
@pytest.mark.parametrize(
    "scenario",
    [pytest.param(s, id=s.name, marks=[EVERY_SCHEDULE] if s.name in HEAVY else []) for s in SCENARIOS],
)
def test_no_interleaving_of_a_probe_and_a_removal_leaves_a_stale_belief(
    scenario: Scenario, record_property: Callable[[str, object], None]
) -> None:
    result = check_scenario(HiCacheFile, scenario)
    assert result.counterexample is None, result.counterexample.render()
    assert result.transitions > 1
    record_property("schedules", result.transitions)


@pytest.mark.clauses("C1")
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_the_store_without_the_c1_guard_is_caught_in_every_scenario(scenario: Scenario) -> None:
    result = check_scenario(NoC1Guard, scenario)
    assert result.counterexample is not None
    assert "C1" in result.counterexample.reason


@pytest.mark.clauses("C1")
def test_a_violating_schedule_replays_to_the_same_violation() -> None:
    first = check_scenario(NoC1Guard, SCENARIOS[0]).counterexample
    second = check_scenario(NoC1Guard, SCENARIOS[0]).counterexample
    assert first is not None and second is not None
    assert first.trace == second.trace and first.configuration == second.configuration


@pytest.mark.clauses("C3", "F4")
@pytest.mark.parametrize("probe", [pytest.param("get", marks=EVERY_SCHEDULE), "exists"])
def test_every_schedule_of_a_miss_racing_a_set_keeps_the_accounting(probe: str) -> None:
    result = accounting_scenario(HiCacheFile, probe)
    assert result.counterexample is None, result.counterexample.render()
