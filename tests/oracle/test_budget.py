"""The oracle's budget and figures: --seconds and the progress line act per example, the figures count
only the examples Hypothesis counts, and the API keeps the targets' warnings quiet (issue 5).

No test here sleeps or reads the wall clock: the run's clock is a fake one that the
target moves, one second per example it builds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

import pytest

import spec.variants.metadata_cache as variants
from spec.models.metadata_cache import MetadataCacheSpec
from spec.oracle import OracleResult, check


class Ticks:
    """A fake run clock: moves one second each time the target below builds a cache (once per example)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def ticking(ticks: Ticks) -> Callable[..., MetadataCacheSpec]:
    def make(
        ttl_seconds: float, max_entries: int | None = None, clock: Callable[[], float] = time.monotonic
    ) -> MetadataCacheSpec:
        ticks.now += 1.0
        return MetadataCacheSpec(ttl_seconds, max_entries=max_entries, clock=clock)

    return make


@pytest.mark.clauses("M4")
def test_a_run_stops_at_the_first_example_after_its_seconds_with_the_figures_so_far() -> None:
    ticks = Ticks()
    result = check("metadata-cache", ticking(ticks), max_examples=300, steps=5, seconds=5, run_clock=ticks)
    assert result.passed, result.summary()
    assert result.figures["examples"] == 5  # the 6th example starts at 5 s: it is not run
    assert result.figures["seconds"] == 5.0
    assert result.figures["steps"] > 0


@pytest.mark.clauses("M4")
def test_a_progress_line_is_printed_during_a_chunk_once_the_elapsed_time_passes_the_threshold() -> None:
    ticks = Ticks()
    lines: list[str] = []
    check("metadata-cache", ticking(ticks), max_examples=10, steps=5, progress=lines.append, run_clock=ticks)
    # After 3 s, at most one a second: at the starts of examples 5, 7 and 9 (4, 6 and 8 s elapsed).
    assert [line.split(", ")[0] for line in lines] == [
        "oracle: 4 examples",
        "oracle: 6 examples",
        "oracle: 8 examples",
    ]
    assert lines[0].endswith(" states, 4.0 s")
    quiet: list[str] = []
    check(
        "metadata-cache", ticking(Ticks()), max_examples=3, steps=5, progress=quiet.append, run_clock=Ticks()
    )
    assert quiet == []


@pytest.mark.clauses("M2", "M4")
@pytest.mark.parametrize(
    "target",
    [variants.TextbookHardTTL, variants.PlainHardTTLSet],
    ids=["examples-Hypothesis-abandons", "examples-Hypothesis-rejects"],
)
def test_max_examples_n_reports_at_most_n_examples(target: Callable[..., Any]) -> None:
    result = check("metadata-cache", target, max_examples=20, steps=20)
    assert result.passed, result.summary()
    assert 0 < result.figures["examples"] <= 20
    assert result.figures["steps"] > result.figures["examples"]


class NoisyTTL(variants.TextbookHardTTL):
    """Correct, and logs a WARNING on every add (as a file store logs each file it cannot remove)."""

    adds = 0

    def add(self, key: Hashable) -> None:
        type(self).adds += 1
        logging.getLogger("tests.oracle.noisy").warning("added %r", key)
        super().add(key)


@pytest.mark.clauses("M4")
def test_the_api_silences_the_targets_warnings_for_the_run_only(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    before = logging.root.manager.disable
    assert check("metadata-cache", NoisyTTL, max_examples=20, steps=10).passed
    assert NoisyTTL.adds > 0  # it did warn
    assert [r for r in caplog.records if r.name == "tests.oracle.noisy"] == []
    assert logging.root.manager.disable == before
    logging.getLogger("tests.oracle.noisy").warning("after the run")
    assert [r.getMessage() for r in caplog.records if r.name == "tests.oracle.noisy"] == ["after the run"]


@pytest.mark.clauses("M4")
def test_a_failure_that_names_no_clause_blames_the_targets_own_invariants() -> None:
    result = OracleResult(
        "metadata-cache",
        "x:Y",
        "FAIL",
        0,
        {"examples": 1, "steps": 1, "distinct_states": 1, "seconds": 0},
        "injected",
        {},
        {},
    )
    assert "  breaks: the target's own invariants" in result.summary().splitlines()


class AlwaysThere(MetadataCacheSpec):
    """Wrong (M4): believes every key, and its ``snapshot()`` shows a key never added, so the first
    check of the first example (the snapshot after the constructor) diverges."""

    def contains(self, key: Hashable) -> bool:
        return True

    def snapshot(self) -> tuple[tuple[Hashable, float], ...]:
        return (("ghost", 0.0),)


@pytest.mark.clauses("M4")
def test_a_divergence_found_before_the_deadline_is_reported_even_if_the_deadline_passes_meanwhile() -> None:
    ticks = Ticks()

    def make(
        ttl_seconds: float, max_entries: int | None = None, clock: Callable[[], float] = time.monotonic
    ) -> MetadataCacheSpec:
        ticks.now += 1.0
        return AlwaysThere(ttl_seconds, max_entries=max_entries, clock=clock)

    # Example 1 starts at 0 s and fails; the deadline (1 s) has passed when Hypothesis replays it.
    result = check("metadata-cache", make, max_examples=50, steps=5, seconds=1, run_clock=ticks)
    assert result.verdict == "FAIL" and result.counterexample, result.summary()
