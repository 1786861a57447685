"""Lock-step refinement of LRUFileEvictor on its own, with writes held in flight across steps (V1-V6, C3).

The same machine runs over the model itself (tests/stateful/model_targets.py), which must trivially conform.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, settings

from hicache import LRUFileEvictor
from spec.machines import run_machine
from spec.machines.file_evictor import FileEvictorMachine
from spec.variants.file_evictor import WRONG_PRODUCTION, RatioIgnored, RetriesUnremovableEvictor
from tests.stateful import SELF_CHECK
from tests.stateful.model_targets import ModelEvictorMachine


class LRUFileEvictorMachine(FileEvictorMachine):
    target = staticmethod(LRUFileEvictor)


@pytest.mark.clauses("V1", "V2", "V3", "V4", "V5", "V6", "C3")
def test_file_evictor_refines_the_model_in_lock_step(record_property: Callable[[str, object], None]) -> None:
    # Capped at 600 examples under the verify profile, as the other machines (the store's machine, which
    # drives the evictor too, keeps the full budget: it found a fake-filesystem bug at 1500).
    budget = settings(parent=settings(), max_examples=min(settings().max_examples, 600))
    figures = run_machine(LRUFileEvictorMachine, budget)
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0


@pytest.mark.clauses("V2", "V3", "V4", "V5", "V6", "S7", "C3")
@SELF_CHECK
def test_the_model_run_as_an_evictor_conforms_to_its_own_machine() -> None:
    budget = settings(parent=settings(), max_examples=min(settings().max_examples, 100))
    figures = run_machine(ModelEvictorMachine, budget)
    assert figures.examples > 0 and figures.checks > figures.examples


@pytest.mark.clauses("S7", "V5", "V6")
def test_the_model_run_as_an_evictor_passes_the_pinned_s7_scenario() -> None:
    _run_steps(ModelEvictorMachine, RETRIED_TOO_SOON)


# RatioIgnored shows only in a write that evicts under a ratio below 1: the search finds it after 38 to
# 463 examples (seeds 0-9, median 92), so at the dev profile's 100 whether it does is the luck of the
# seed (a derandomized run's seed comes from the machine's source).  Its pinned scenario below catches
# it in every tier; the search runs in the verify tier, with 1000 examples.
SLOW_TO_FIND = {"RatioIgnored": 1000}


@pytest.mark.clauses("V3", "V4", "V5", "V6", "S7")
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.verify_tier] if n in SLOW_TO_FIND else []) for n in WRONG_PRODUCTION],
)
def test_evictor_machine_catches_the_deliberately_wrong_evictor(name: str) -> None:
    variant, _clause = WRONG_PRODUCTION[name]
    budget = settings(
        settings.get_profile("dev"),
        max_examples=SLOW_TO_FIND.get(name, 100),
        phases=[Phase.explicit, Phase.generate],
        database=None,
    )
    with pytest.raises(AssertionError):
        run_machine(FileEvictorMachine.over(variant), budget)


# S7: the shortest run that shows a victim retried before its back-off ends (rules called as Hypothesis
# would call them): the second pass must skip the resting file, with no on_evict (the checker compares
# the callbacks with the model's victims after every step).
RETRIED_TOO_SOON: list[tuple[str, dict[str, object]]] = [
    ("write", {"key": "a", "size": 5}),
    ("write", {"key": "b", "size": 5}),
    ("file_becomes_unremovable", {"index": 0, "code": errno.EPERM}),
    ("write", {"key": "c", "size": 5}),
    ("write", {"key": "d", "size": 5}),
]


# V3: four writes of 3 bytes under a cap of 10 and a ratio of 0.5: the fourth evicts down to
# floor(10 * 0.5) - 3 = 2 bytes (all three others), not to 10 - 3 (only the oldest).
RATIO_HALF: list[tuple[str, dict[str, object]]] = [("write", {"key": key, "size": 3}) for key in "abcd"]


def _run_steps(
    machine_class: type[FileEvictorMachine], steps: list[tuple[str, dict[str, object]]], ratio: float = 1.0
) -> None:
    machine: Any = machine_class()
    machine.build(cap=10, ratio=ratio, min_free=0, disk_size=1 << 20)
    machine.check_step()
    for rule_name, kwargs in steps:
        getattr(machine, rule_name)(**kwargs)
        machine.check_step()


@pytest.mark.clauses("S7", "V5", "V6")
def test_a_victim_retried_before_its_back_off_ends_is_caught_and_production_passes() -> None:
    _run_steps(LRUFileEvictorMachine, RETRIED_TOO_SOON)
    with pytest.raises(AssertionError, match=r"on_evict \['a', 'b', 'a', 'c'\] != \['a', 'b', 'c'\]"):
        _run_steps(FileEvictorMachine.over(RetriesUnremovableEvictor), RETRIED_TOO_SOON)


@pytest.mark.clauses("V3")
def test_an_eviction_ratio_ignored_is_caught_and_production_passes() -> None:
    _run_steps(LRUFileEvictorMachine, RATIO_HALF, ratio=0.5)
    _run_steps(ModelEvictorMachine, RATIO_HALF, ratio=0.5)
    with pytest.raises(AssertionError, match=r"^V3: on_evict \['a'\] != \['a', 'b', 'c'\]"):
        _run_steps(FileEvictorMachine.over(RatioIgnored), RATIO_HALF, ratio=0.5)
