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
from spec.machines.file_evictor import file_evictor_machine
from spec.variants.file_evictor import WRONG_PRODUCTION, RetriesUnremovableEvictor
from tests.stateful import SELF_CHECK
from tests.stateful.model_targets import model_evictor


@pytest.mark.clauses("V1", "V2", "V3", "V4", "V5", "V6", "C3")
def test_file_evictor_refines_the_model_in_lock_step(record_property: Callable[[str, object], None]) -> None:
    # Capped at 600 examples under the verify profile, as the other machines (the store's machine, which
    # drives the evictor too, keeps the full budget: it found a fake-filesystem bug at 1500).
    budget = settings(parent=settings(), max_examples=min(settings().max_examples, 600))
    figures = run_machine(file_evictor_machine(LRUFileEvictor), budget)
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0


@pytest.mark.clauses("V2", "V3", "V4", "V5", "V6", "S7", "C3")
@SELF_CHECK
def test_the_model_run_as_an_evictor_conforms_to_its_own_machine() -> None:
    budget = settings(parent=settings(), max_examples=min(settings().max_examples, 100))
    figures = run_machine(file_evictor_machine(model_evictor), budget)
    assert figures.examples > 0 and figures.checks > figures.examples


@pytest.mark.clauses("S7", "V5", "V6")
def test_the_model_run_as_an_evictor_passes_the_pinned_s7_scenario() -> None:
    _run_steps(model_evictor)


@pytest.mark.clauses("V3", "V4", "V5", "V6", "S7")
@pytest.mark.parametrize("name", list(WRONG_PRODUCTION))
def test_evictor_machine_catches_the_deliberately_wrong_evictor(name: str) -> None:
    variant, _clause = WRONG_PRODUCTION[name]
    budget = settings(settings.get_profile("dev"), phases=[Phase.explicit, Phase.generate], database=None)
    with pytest.raises(AssertionError):
        run_machine(file_evictor_machine(variant), budget)


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


def _run_steps(factory: Callable[..., Any]) -> None:
    machine: Any = file_evictor_machine(factory)()
    machine.build(cap=10, ratio=1.0, min_free=0, disk_size=1 << 20)
    machine.check_step()
    for rule_name, kwargs in RETRIED_TOO_SOON:
        getattr(machine, rule_name)(**kwargs)
        machine.check_step()


@pytest.mark.clauses("S7", "V5", "V6")
def test_a_victim_retried_before_its_back_off_ends_is_caught_and_production_passes() -> None:
    _run_steps(LRUFileEvictor)
    with pytest.raises(AssertionError, match=r"on_evict \['a', 'b', 'a', 'c'\] != \['a', 'b', 'c'\]"):
        _run_steps(RetriesUnremovableEvictor)
